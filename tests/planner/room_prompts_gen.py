#!/usr/bin/python3
"""room_prompts_gen.py — the room descriptions of compose_prompts.json (issue 26), written from
sentence patterns with a fixed seed: each entry a paragraph of 3 to 6 sentences describing a room
and what it should hold, with what is expected of it ("expect": objects with counts and colours,
relations [subject, relation, anchor], spots [subject, spot], absent recipes).

    /usr/bin/python3 tests/planner/room_prompts_gen.py          # rewrite the room entries of compose_prompts.json
    /usr/bin/python3 tests/planner/room_prompts_gen.py --print  # print them

Entries that have "parts" (the older, exact-parse set) are kept as they are.
"""
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FILE = os.path.join(HERE, "compose_prompts.json")

# recipe: ([singular phrasings], plural phrase)
NOUN = {
    "bed": (["bed", "double bed"], "beds"), "single_bed": (["single bed", "twin bed"], "single beds"),
    "nightstand": (["nightstand", "bedside table", "night table"], "nightstands"), "wardrobe": (["wardrobe", "closet"], "wardrobes"),
    "dresser": (["dresser", "chest of drawers"], "dressers"), "desk": (["desk", "writing desk"], "desks"),
    "office_chair": (["office chair", "desk chair"], "office chairs"), "bookshelf": (["bookshelf", "bookcase"], "bookshelves"),
    "rug": (["rug", "carpet"], "rugs"), "painting": (["painting", "picture", "framed print"], "paintings"),
    "mirror": (["mirror", "wall mirror"], "mirrors"), "floor_lamp": (["floor lamp", "standing lamp"], "floor lamps"),
    "table_lamp": (["table lamp", "small lamp"], "table lamps"), "tall_plant": (["tall plant", "ficus", "large plant"], "tall plants"),
    "potted_plant": (["potted plant", "house plant"], "potted plants"), "armchair": (["armchair", "sofa chair", "reading chair"], "armchairs"),
    "sofa": (["sofa", "couch"], "sofas"), "coffee_table": (["coffee table"], "coffee tables"), "tv_stand": (["TV stand", "media console"], "TV stands"),
    "tv": (["TV", "television"], "TVs"), "side_table": (["side table", "end table"], "side tables"), "curtains": (["curtains"], "curtains"),
    "fridge": (["fridge", "refrigerator"], "fridges"), "stove": (["stove", "oven"], "stoves"), "kitchen_sink": (["sink", "kitchen sink"], "sinks"),
    "counter": (["counter", "kitchen counter"], "counters"), "microwave": (["microwave"], "microwaves"), "table": (["table", "dining table"], "tables"),
    "chair": (["chair", "dining chair"], "chairs"), "round_table": (["round table"], "round tables"), "toilet": (["toilet"], "toilets"),
    "bathtub": (["bathtub", "bath tub"], "bathtubs"), "bathroom_sink": (["washbasin", "bathroom sink"], "washbasins"),
    "towel_rack": (["towel rack", "towel rail"], "towel racks"), "washing_machine": (["washing machine", "washer"], "washing machines"),
    "dryer": (["dryer", "tumble dryer"], "dryers"), "sideboard": (["sideboard", "buffet"], "sideboards"), "book": (["book"], "books"),
    "computer_monitor": (["monitor", "computer monitor"], "monitors"), "laptop": (["laptop"], "laptops"), "mug": (["mug", "coffee mug"], "mugs"),
    "vase": (["vase"], "vases"), "wall_clock": (["wall clock", "clock"], "clocks"), "filing_cabinet": (["filing cabinet"], "filing cabinets"),
    "mini_fridge": (["mini fridge"], "mini fridges"), "bar_stool": (["bar stool"], "bar stools"), "kitchen_island": (["kitchen island"], "kitchen islands"),
    "ottoman": (["ottoman", "footstool"], "ottomans"), "piano": (["piano"], "pianos"), "fireplace": (["fireplace"], "fireplaces"),
    "speaker": (["speaker"], "speakers"), "whiteboard": (["whiteboard"], "whiteboards"), "trash_can": (["trash can", "bin"], "trash cans"),
    "crib": (["crib"], "cribs"), "toy_box": (["toy chest", "toy box"], "toy chests"), "teddy_bear": (["teddy bear"], "teddy bears"),
    "coat_rack": (["coat rack"], "coat racks"), "shoe_rack": (["shoe rack"], "shoe racks"), "console_table": (["console table"], "console tables"),
    "loveseat": (["loveseat"], "loveseats"), "recliner": (["recliner"], "recliners"), "cabinet": (["cabinet"], "cabinets"),
    "desk_lamp": (["desk lamp"], "desk lamps"), "printer": (["printer"], "printers"), "pillow": (["pillow", "cushion"], "pillows"),
    "fruit_bowl": (["fruit bowl", "bowl of fruit"], "fruit bowls"), "kettle": (["kettle"], "kettles"), "toaster": (["toaster"], "toasters"),
    "treadmill": (["treadmill"], "treadmills"), "exercise_bike": (["exercise bike"], "exercise bikes"), "yoga_mat": (["yoga mat"], "yoga mats"),
}
COLOURS = ["white", "black", "red", "blue", "green", "grey", "yellow", "brown", "beige", "orange", "pink", "purple"]
MATERIALS = ["wooden", "oak", "metal", "leather", "glass", "fabric", "walnut", "velvet"]
ROOMS = {
    "bedroom": dict(anchor="bed", wall=["bed", "wardrobe", "dresser", "desk", "bookshelf"], corner=["tall_plant", "floor_lamp", "armchair"],
                    small=["table_lamp", "book", "mug", "vase"], surf=["nightstand", "dresser", "desk"], hung=["painting", "mirror", "wall_clock"],
                    flank="nightstand", under="rug", extra=["armchair", "ottoman", "curtains", "toy_box", "side_table"], neg=["wardrobe", "tv", "desk"]),
    "living room": dict(anchor="sofa", wall=["tv_stand", "bookshelf", "sideboard", "piano", "fireplace"], corner=["tall_plant", "floor_lamp", "speaker"],
                        small=["vase", "book", "mug", "table_lamp"], surf=["coffee_table", "side_table", "sideboard"], hung=["painting", "mirror", "wall_clock"],
                        flank="side_table", under="rug", extra=["armchair", "ottoman", "loveseat", "recliner", "curtains"], neg=["tv", "piano", "rug"]),
    "kitchen": dict(anchor="table", wall=["fridge", "stove", "kitchen_sink", "counter", "cabinet"], corner=["trash_can", "potted_plant"],
                    small=["microwave", "kettle", "toaster", "fruit_bowl", "mug"], surf=["counter", "table"], hung=["wall_clock", "painting"],
                    flank="chair", under="rug", extra=["kitchen_island", "bar_stool", "mini_fridge"], neg=["microwave", "kitchen_island"]),
    "office": dict(anchor="desk", wall=["bookshelf", "filing_cabinet", "cabinet", "sofa"], corner=["tall_plant", "floor_lamp", "trash_can"],
                   small=["computer_monitor", "laptop", "desk_lamp", "mug", "printer"], surf=["desk", "filing_cabinet"], hung=["whiteboard", "painting", "wall_clock"],
                   flank="bookshelf", under="rug", extra=["armchair", "side_table", "mini_fridge"], neg=["sofa", "printer"]),
    "dining room": dict(anchor="table", wall=["sideboard", "cabinet", "bookshelf"], corner=["tall_plant", "floor_lamp"],
                        small=["vase", "fruit_bowl", "mug"], surf=["table", "sideboard"], hung=["painting", "mirror", "wall_clock"],
                        flank="chair", under="rug", extra=["console_table", "armchair"], neg=["sideboard", "rug"]),
    "bathroom": dict(anchor="bathtub", wall=["toilet", "bathroom_sink", "washing_machine", "cabinet"], corner=["potted_plant", "trash_can"],
                     small=["vase", "mug"], surf=["bathroom_sink", "cabinet"], hung=["mirror", "towel_rack"],
                     flank="potted_plant", under="rug", extra=["dryer", "shoe_rack"], neg=["washing_machine", "bathtub"]),
    "kids room": dict(anchor="single_bed", wall=["dresser", "bookshelf", "desk", "toy_box"], corner=["tall_plant", "floor_lamp"],
                      small=["teddy_bear", "book", "table_lamp"], surf=["nightstand", "desk", "dresser"], hung=["painting", "wall_clock", "whiteboard"],
                      flank="nightstand", under="rug", extra=["crib", "armchair", "ottoman"], neg=["crib", "desk"]),
}
NUMBER = {1: "a", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def noun(rng, r, n=1):
    sing, plur = NOUN[r]
    return rng.choice(sing) if n == 1 else plur


def art(word):
    return "an" if word[0].lower() in "aeiou" else "a"


def one(rng, r, colour=None):
    w = noun(rng, r)
    phrase = (colour + " " if colour else "") + w
    return phrase if r == "curtains" else art(phrase) + " " + phrase


def entry(rng, idx):
    kind = rng.choice(list(ROOMS))
    R = ROOMS[kind]
    objs, rels, spots, absent = {}, [], [], []
    text = []

    def add(r, n=1, colour=None):
        o = objs.setdefault(r, {"count": 0})
        o["count"] += n
        if colour:
            o["colour"] = colour

    size = rng.choice(["", "small ", "large ", "cozy ", "bright ", ""])
    dims = rng.random() < 0.25
    if dims:
        w, d = rng.choice([(4, 5), (3.5, 4), (5, 6), (4, 4.5), (6, 5)])
        text.append(rng.choice(["Design a %s%s of %g by %g m." % (size, kind, w, d), "This %s measures %g by %g meters." % (kind, w, d)]))
    else:
        text.append(rng.choice(["A %s%s." % (size, kind), "Build me a %s%s.", "Here is a %s%s."]).replace("%s%s", size + kind) if "%s" in "%s" else "")
    a = R["anchor"]
    ca = rng.choice(COLOURS) if rng.random() < 0.5 else None
    add(a, 1, ca)
    anchor_phrase = one(rng, a, ca)
    s = rng.choice(["%s is the centre of the room.", "%s stands in the middle of the room."] if a in ("table", "round_table") else
                   ["%s stands against the back wall.", "There is %s against the wall.", "%s stands against the wall."])
    s = s % anchor_phrase
    text.append(s[0].upper() + s[1:])
    if "against" in s:
        spots.append([a, "wall"])
    if "centre" in s or "middle" in s:
        spots.append([a, "center"])
    # flanking / around
    f = R["flank"]
    if f == "chair" and a in ("table", "round_table"):
        n = rng.choice([2, 4, 6])
        add("chair", n)
        text.append("%s %s stand around the %s." % (NUMBER[n].capitalize(), noun(rng, "chair", n), noun(rng, a)))
        rels.append(["chair", "around", a])
    elif f:
        add(f, 2)
        text.append(rng.choice(["Two %s are on both sides of the %s.", "Put two %s on either side of the %s.", "Two %s flanking the %s."])
                    % (noun(rng, f, 2), noun(rng, a)))
        rels.append([f, "both_sides", a])
        if rng.random() < 0.4 and R["small"] and f in ("nightstand", "side_table"):
            sm = rng.choice([x for x in R["small"] if x not in objs] or R["small"])
            add(sm, 2)
            text[-1] = text[-1][:-1] + ", with %s on each." % one(rng, sm)
            rels.append([sm, "on", f])
    # things on a surface
    surf = rng.choice([x for x in R["surf"] if x != f])
    if surf not in objs:
        cs = rng.choice(COLOURS) if rng.random() < 0.4 else None
        add(surf, 1, cs)
        sp = one(rng, surf, cs)
        if surf != a:
            text.append(rng.choice(["There is also %s.", "Add %s against the wall.", "%s goes against the wall."]) % sp
                        if True else "")
            text[-1] = text[-1][0].upper() + text[-1][1:]
            if "against" in text[-1]:
                spots.append([surf, "wall"])
    sm = rng.choice([x for x in R["small"] if x not in objs] or ["vase"])
    n = rng.choice([1, 1, 2, 3]) if sm in ("book", "mug") else 1
    add(sm, n)
    text.append(rng.choice(["%s sits on the %s.", "Place %s on the %s.", "On the %s there is %s."]))
    if text[-1].startswith("On the"):
        text[-1] = text[-1] % (noun(rng, surf), (NUMBER[n] + " " + noun(rng, sm, n)) if n > 1 else one(rng, sm))
    else:
        text[-1] = text[-1] % ((NUMBER[n] + " " + noun(rng, sm, n)) if n > 1 else one(rng, sm), noun(rng, surf))
        text[-1] = text[-1][0].upper() + text[-1][1:]
    if n > 1 and text[-1].split()[1] != "the":
        text[-1] = text[-1].replace(" sits ", " sit ")
    rels.append([sm, "on", surf])
    # a hung thing
    if rng.random() < 0.7:
        h = rng.choice(R["hung"])
        add(h)
        if rng.random() < 0.5 and a not in ("table", "round_table"):
            text.append("%s hangs above the %s." % (one(rng, h).capitalize(), noun(rng, a)))
            rels.append([h, "above", a])
        else:
            text.append("%s hangs on the wall." % one(rng, h).capitalize())
            spots.append([h, "on_wall"])
    # a corner thing
    if rng.random() < 0.7:
        c = rng.choice([x for x in R["corner"] if x not in objs] or R["corner"])
        if c not in objs:
            add(c)
            text.append(rng.choice(["In the corner there is %s.", "%s stands in the corner.", "Put %s in a corner."]) % one(rng, c))
            text[-1] = text[-1][0].upper() + text[-1][1:]
            spots.append([c, "corner"])
    # a second relation
    if rng.random() < 0.6:
        e = rng.choice([x for x in R["extra"] if x not in objs] or R["extra"])
        if e not in objs:
            m = rng.choice(MATERIALS) if rng.random() < 0.3 else None
            col = rng.choice(COLOURS) if not m and rng.random() < 0.4 else None
            add(e, 1, col)
            rel = rng.choice(["next_to", "left_of", "right_of", "in_front_of"] + (["facing"] if e in ("armchair", "recliner", "loveseat") else []))
            words = {"next_to": "next to", "left_of": "to the left of", "right_of": "to the right of", "in_front_of": "in front of", "facing": "facing"}[rel]
            ep = one(rng, e, col or m)
            text.append("%s %s %s the %s." % (ep[0].upper() + ep[1:], "are" if e == "curtains" else "is", words, noun(rng, a)))
            rels.append([e, rel, a])
    # under
    if rng.random() < 0.35 and R["under"] not in objs and a not in ("bathtub",):
        u = R["under"]
        cu = rng.choice(COLOURS) if rng.random() < 0.5 else None
        add(u, 1, cu)
        text.append("%s lies under the %s." % (one(rng, u, cu).capitalize(), noun(rng, a)))
        rels.append([u, "under", a])
    # not wanted
    if rng.random() < 0.4:
        x = rng.choice([y for y in R["neg"] if y not in objs] or [None])
        if x:
            text.append(rng.choice(["There is no %s.", "No %s, please.", "I do not want a %s."]) % noun(rng, x))
            absent.append(x)
    if rng.random() < 0.2:
        text.append("Keep the floor in the middle free.")
    objects = [dict(name=k, **v) for k, v in objs.items()]
    return {"prompt": " ".join(t for t in text if t), "expect": {"room": kind, "objects": objects, "relations": rels, "spots": spots,
                                                                 "absent": absent}}


def main(argv):
    rng = random.Random(26)
    rooms = [entry(rng, i) for i in range(320)]
    if "--print" in argv:
        for r in rooms:
            print(json.dumps(r))
        return 0
    with open(FILE, encoding="utf-8") as f:
        old = json.load(f)
    kept = [e for e in old if "expect" not in e]
    with open(FILE, "w", encoding="utf-8") as f:
        f.write("[\n")
        f.write(",\n".join("  " + json.dumps(e, ensure_ascii=False) for e in kept + rooms))
        f.write("\n]\n")
    print("room_prompts_gen: %d room descriptions, %d other prompts" % (len(rooms), len(kept)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
