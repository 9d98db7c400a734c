/* slow_llm — an OpenAI-compatible chat completions server that takes its
 * time, so that a chat is *in the planner* when a fault hits.
 *
 * It binds 127.0.0.1 on a port the OS picks (libmicrohttpd, a thread per
 * connection). Every POST is answered after `delay_ms` with one submit_plan
 * tool call: a plan of SLOW_LLM_OBJECTS cubes named PREFIX_o0, PREFIX_o1, …
 * where PREFIX is the word after "FAULTPREFIX=" in the request (the test puts
 * it in the prompt), so the scene check knows which objects the chat makes.
 * Unlike tests/planner/fake_llm it needs no scripted replies: it answers any
 * number of prompts, from any number of planner processes, for as long as it
 * runs. */
#ifndef BMQ_SLOW_LLM_H
#define BMQ_SLOW_LLM_H

#include <stddef.h>

#define SLOW_LLM_OBJECTS 6

typedef struct slow_llm_t slow_llm_t;

/* NULL when the server cannot start. */
slow_llm_t *slow_llm_new (int delay_ms);
/* Stops the server (answers being delayed are cut short); safe twice. */
void        slow_llm_destroy (slow_llm_t **self_p);
/* http://127.0.0.1:PORT (the planner's base URL is this plus "/v1"). */
const char *slow_llm_url (const slow_llm_t *self);
/* Requests being answered right now (i.e. chats waiting on the "model"). */
int         slow_llm_busy (slow_llm_t *self);
/* Requests answered so far. */
size_t      slow_llm_served (slow_llm_t *self);

#endif
