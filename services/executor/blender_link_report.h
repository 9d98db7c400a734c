/* blender_link_report — the hello reply's interrupted-plan reports (issue 17),
 * checked: each object the add-on sends is rebuilt from a table of its fields
 * (bmq_link_*_fields, generated from proto/blender_link.json as the add-on's
 * link_proto.py is); a field is copied only when its check passes, so nothing
 * unchecked or unbounded goes further. */
#ifndef BMQ_BLENDER_LINK_REPORT_H
#define BMQ_BLENDER_LINK_REPORT_H

#include <jansson.h>

/* The hello reply's result (borrowed) rebuilt from bmq_link_hello_fields: a
 * new object, or NULL when it is not an object. */
json_t *bmq_link_hello_report_check (json_t *result);

#endif
