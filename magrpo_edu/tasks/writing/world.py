"""A small synthetic world of first-person posts and research abstracts, seeded and reproducible.

Used twice, on purpose: the writing tasks' training prompts come from here, and so does the
embedded tiny model's pretraining corpus (`magrpo_edu.pretraining.corpus`). Nothing here is copied from TL;DR
or arXiv; every sentence is assembled from the tables below.

Each generator returns a plain dict of *facts* as well as the text, so the corpus can write
summaries of the same post at many lengths and in many styles without ever scoring them.
"""
from __future__ import annotations

import random

NAMES = ["Sam", "Alex", "Priya", "Jordan", "Mia", "Tom", "Lena", "Omar", "Chris", "Noor", "Eli", "Rosa",
         "Ken", "Ada", "Luis", "Maya", "Ben", "Zoe", "Ivan", "Kim", "Ravi", "Nina", "Leo", "Sara"]
RELATIONS = ["roommate", "boyfriend", "girlfriend", "best friend", "sister", "brother", "coworker",
             "boss", "neighbor", "mom", "dad", "partner", "landlord", "classmate", "cousin"]

# topic -> (setting phrases, problem phrases, attempt phrases, question phrases)
TOPICS = {
    "roommate": (["we have shared a small apartment for {n} months", "we moved in together last {season}"],
                 ["my {rel} never cleans the kitchen", "my {rel} plays loud music every night",
                  "my {rel} keeps eating my food", "my {rel} invites guests without asking"],
                 ["I left a polite note", "I tried to bring it up over dinner", "I made a cleaning schedule"],
                 ["how do I talk to them without starting a fight", "should I just move out",
                  "is it fair to ask them to pay more"]),
    "work": (["I started a new job {n} months ago", "I have worked at the same company for {n} years"],
             ["my {rel} takes credit for my work", "I am asked to stay late almost every day",
              "I was passed over for a promotion", "my team ignores my ideas in meetings"],
             ["I talked to HR once", "I kept a list of everything I did", "I asked for feedback"],
             ["should I look for another job", "how do I ask for a raise", "how do I set boundaries"]),
    "money": (["I earn a modest salary", "I just finished paying off a loan after {n} years"],
              ["my {rel} borrowed money and never paid it back", "I spend too much on takeout",
               "I cannot save anything at the end of the month", "my rent went up again"],
              ["I made a budget in a spreadsheet", "I cancelled two subscriptions", "I asked my {rel} twice"],
              ["how do I bring up the money again", "what budget method actually works",
               "should I ask for a loan"]),
    "health": (["I am {age} and usually pretty active", "I have been feeling tired for {n} weeks"],
               ["I cannot sleep more than four hours a night", "my back hurts after long days at the desk",
                "I get headaches every afternoon", "I stopped going to the gym"],
               ["I cut down on coffee", "I bought a new chair", "I started walking after work"],
               ["should I see a doctor", "what helped you sleep better", "how do I get back into a routine"]),
    "relationship": (["we have been together for {n} years", "we met {n} months ago at a party"],
                     ["my {rel} forgets every plan we make", "my {rel} wants to move to another city",
                      "my {rel} spends all weekend gaming", "we argue about chores all the time"],
                     ["I tried to talk calmly", "I suggested a weekly date night", "we went to counseling once"],
                     ["am I overreacting", "how do we compromise", "should we take a break"]),
    "pets": (["I adopted a dog {n} months ago", "my cat is {n} years old"],
             ["my dog barks whenever I leave", "my cat scratches all the furniture",
              "my {rel} is allergic to my pet", "my dog pulls hard on the leash"],
             ["I bought a scratching post", "I hired a trainer for two sessions", "I tried leaving the radio on"],
             ["how do I train them", "should I rehome my pet", "what worked for your pet"]),
    "school": (["I am in my {nth} year of college", "I am taking night classes after work"],
               ["I failed my first exam", "my group project partner does nothing",
                "I cannot focus when I study", "I am not sure I chose the right major"],
               ["I went to office hours", "I made a study plan", "I joined a study group"],
               ["how do I catch up", "should I switch majors", "how do I deal with my partner"]),
    "travel": (["I am planning my first trip abroad", "I travel for work about {n} times a year"],
               ["my flight was cancelled and nobody will refund it", "I am afraid of flying",
                "my {rel} wants to plan every minute of the trip", "I lost my passport last week"],
               ["I called the airline three times", "I read a lot of advice online", "I filed a report"],
               ["what are my options", "how do I stay calm", "how do we plan it together"]),
    "neighbors": (["I moved into a quiet street {n} months ago", "I live in an old building with thin walls"],
                  ["my {rel} parks in my spot every day", "the people upstairs stomp around at night",
                   "my {rel} lets their dog use my yard", "my {rel} complains about my kids"],
                  ["I knocked on their door", "I wrote a friendly letter", "I talked to the building manager"],
                  ["what else can I do", "should I call the city", "how do I keep the peace"]),
    "car": (["I bought a used car {n} months ago", "I drive about an hour to work"],
            ["the engine light keeps coming on", "the mechanic wants a lot of money for a repair",
             "my {rel} dented my car and will not pay", "I am nervous driving on the highway"],
            ["I got a second quote", "I took a defensive driving class", "I checked the manual"],
            ["is it worth fixing", "how do I ask them to pay", "how do I get more confident"]),
}
FEELINGS = ["I feel stressed", "I am honestly exhausted", "it makes me really anxious", "I am frustrated",
            "I feel stuck", "I do not know what to think", "I feel guilty about it", "I am losing sleep over it"]
DETAILS = ["It started small, but it has gotten worse.", "Nobody else seems to notice.",
           "It happens at least three times a week.", "I do not want to ruin a good thing.",
           "My friends say I should just ignore it.", "Last week it got really bad.",
           "I know I am not perfect either.", "I have tried to be patient for a long time."]
SEASONS = ["spring", "summer", "fall", "winter"]
NTH = ["first", "second", "third", "final"]


def make_post(rng: random.Random) -> dict:
    """One first-person post (about 60-250 words) plus the facts it was built from."""
    topic = rng.choice(sorted(TOPICS))
    settings, problems, attempts, questions = TOPICS[topic]
    f = dict(topic=topic, name=rng.choice(NAMES), age=rng.randint(19, 58), rel=rng.choice(RELATIONS),
             n=rng.randint(2, 11), season=rng.choice(SEASONS), nth=rng.choice(NTH))
    fill = lambda s: s.format(**f)  # noqa: E731
    f["setting"] = fill(rng.choice(settings))
    f["problem"] = fill(rng.choice(problems))
    f["attempts"] = [fill(a) for a in rng.sample(attempts, k=rng.randint(1, len(attempts)))]
    f["feeling"] = rng.choice(FEELINGS)
    f["question"] = rng.choice(questions)
    f["details"] = rng.sample(DETAILS, k=rng.randint(1, 5))
    opener = rng.choice(["Hi everyone.", "Throwaway account for obvious reasons.", "Long time reader, first post.",
                         "I need some outside advice.", ""])
    s = [opener, f"I am {f['age']} and {f['setting']}.", f"The problem is that {f['problem']}."]
    s += f["details"][: len(f["details"]) // 2 + 1]
    s += [f"So far {', then '.join(f['attempts'])}.", f"Nothing has changed and {f['feeling']}."]
    s += f["details"][len(f["details"]) // 2 + 1:]
    s += [f"My question is, {f['question']}?", rng.choice(["Thanks for reading.", "Any advice helps.", ""])]
    f["text"] = " ".join(x for x in s if x)
    return f


FIELDS = ["graph learning", "speech recognition", "protein folding", "robot navigation", "text summarization",
          "image segmentation", "recommender systems", "time series forecasting", "machine translation",
          "code generation", "weather prediction", "drug discovery", "question answering", "anomaly detection"]
CHALLENGES = ["labelled data is scarce", "models do not generalize to new domains", "training is expensive",
              "existing methods are slow at inference time", "results are hard to interpret",
              "noise in the inputs degrades accuracy", "long inputs exceed the memory budget"]
METHODS = ["a lightweight attention module", "a contrastive pretraining objective", "a two-stage curriculum",
           "a mixture of small experts", "a retrieval step before prediction", "a sparse graph encoder",
           "a self-training loop with confidence filtering", "a low-rank adapter for each domain"]
RESULTS = ["improves accuracy by {p} percent", "reduces training cost by {p} percent",
           "matches the strongest baseline with {p} percent fewer parameters",
           "cuts inference latency by {p} percent", "reduces error by {p} percent on held-out data"]
BENCHMARKS = ["three public benchmarks", "two large datasets", "a new benchmark we release", "five standard tasks"]


def make_abstract(rng: random.Random) -> dict:
    """One research-style abstract (problem, method, result) plus its facts, about 70-100 words (the
    hand-written eval abstracts are 78-103 words)."""
    f = dict(field=rng.choice(FIELDS), challenge=rng.choice(CHALLENGES), method=rng.choice(METHODS),
             result=rng.choice(RESULTS).format(p=rng.randint(3, 40)), bench=rng.choice(BENCHMARKS),
             extra=rng.choice(CHALLENGES))
    s = [f"Progress in {f['field']} has been rapid, but {f['challenge']}.",
         rng.choice([f"This matters because real deployments of {f['field']} systems depend on it.",
                     f"Prior work mostly ignores this, and it also suffers because {f['extra']}.",
                     f"As a result, many practical applications of {f['field']} remain out of reach."]),
         f"In this paper we propose {f['method']} that addresses this problem directly.",
         rng.choice(["The key idea is to share information between related examples.",
                     "Our approach is simple to implement and adds little overhead.",
                     "We also provide a theoretical analysis of when the method helps."]),
         f"We evaluate it on {f['bench']}.",
         f"Experiments show that our method {f['result']} compared with strong baselines.",
         rng.choice(["Ablations confirm that each component contributes.",
                     "We release our code to support future work.",
                     f"These results suggest a practical path for {f['field']} at scale."])]
    f["text"] = " ".join(s)
    return f
