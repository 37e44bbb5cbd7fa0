"""Easy: people talking about working in tech and about technology in their lives, asking for no code.

tech_chat.py writes one-line asks ("is X hard to learn?"); these are told the way people tell them: a
career question wrapped in the asker's situation (age, current job, years, money, hours); chatter about
gadgets, the industry and the news with an opinion and a question back; how to learn a language or a
tool (resources, order, time) told with the learner's situation. All three are full of the words code
requests use (developer, backend, AI, Python) and belong on the diffusion backend all the same, so they
give the scorer easy counter-examples written in more than one way.
"""

from __future__ import annotations

import random

from gateway_training.generators.easy_common import chat, make, noisy, pick
from gateway_training.sources import Messages, Source

__all__ = ["SOURCES"]

# --- careers: "<who I am>. <what I want>. <what holds me back>. <question>" ---------------------------

_NOW = (
    "I'm {age} and I've worked in retail for {years} years",
    "I'm a second-year biology student",
    "I've been a junior front-end developer for {months} months",
    "I'm a stay-at-home parent going back to work after {years} years",
    "I've done manual QA testing at an insurance company for {years} years",
    "I teach maths at a secondary school",
    "I'm a nurse, {years} years on night shifts",
    "I run the IT helpdesk at a small law firm",
    "I just finished a {weeks}-week coding bootcamp",
    "I'm a graphic designer who has freelanced for {years} years",
    "I'm a backend engineer at a fintech startup, about {years} years in",
    "I'm {age}, self-taught, and I build websites for friends on weekends",
    "I work in a warehouse and have been learning Python at night for {months} months",
    "I've been a data analyst for {years} years, mostly spreadsheets and dashboards",
    "I'm a mid-level Java developer at a big bank",
    "I'm finishing a computer science degree this summer",
)
_WANT = (
    "I'd love to move into data analysis",
    "I'm thinking about becoming a product manager",
    "I want to get my first job in cybersecurity",
    "UX design has always interested me",
    "my dream is a fully remote job at a software company",
    "I'd like to be promoted to senior within a year or two",
    "people keep telling me DevOps pays well",
    "I'm tempted to go freelance",
    "I'm considering a move into machine learning",
    "I want to switch from agency work to an in-house team",
    "I'd like to become a tech lead eventually",
    "a friend suggested I try technical writing",
    "I keep thinking about starting my own small app business",
)
_BUT = (
    "I can only study in the evenings after {hour} pm",
    "I have {kids} kids and a mortgage",
    "I've saved roughly {months} months of rent, no more",
    "there are hardly any tech companies where I live",
    "my English isn't perfect",
    "I have no degree",
    "I'm scared I'm too old compared to the 22-year-olds",
    "my manager doesn't really support it",
    "I've been rejected from {n} interviews already",
    "everyone online says the market is terrible right now",
    "",
    "",
)
_ASK_CAREER = (
    "Is a bootcamp worth the money or should I teach myself?",
    "How do I explain the gap on my CV?",
    "Which certificates actually matter to employers?",
    "Should I do a master's first?",
    "How many hours a week would that realistically take?",
    "What should go in my portfolio?",
    "How do I negotiate the salary on a first offer?",
    "Is it too late for me?",
    "How do you deal with imposter syndrome?",
    "What questions should I ask at the end of an interview?",
    "Would you stay or jump ship?",
    "How do I even find a mentor?",
    "Be honest, is this a realistic plan?",
    "What would you do in my shoes?",
    "Is LinkedIn worth the effort, or is it all noise?",
    "How do I talk about this with my boss without sounding ungrateful?",
)
_CAREER_REPLY = (
    "Happy to help! Tell me a bit more about where you are now.",
    "Sure, career questions are welcome. What's on your mind?",
    "Of course. What would you like to talk through?",
)
_CAREER_OPENERS = (
    "can I ask you something about my career?",
    "need some honest career advice",
    "hi, job question",
)


def _career(rng: random.Random) -> Messages:
    slots = {
        "age": rng.randint(19, 52),
        "years": rng.randint(2, 15),
        "months": rng.randint(3, 18),
        "weeks": pick(rng, (12, 14, 16, 24)),
        "hour": rng.randint(8, 10),
        "kids": rng.randint(1, 4),
        "n": rng.randint(3, 20),
    }
    now = pick(rng, _NOW).format(**slots)
    want = pick(rng, _WANT)
    but = pick(rng, _BUT).format(**slots)
    parts = [now + ".", want[0].upper() + want[1:] + "."]
    if but:
        parts.append(pick(rng, ("But ", "The catch: ", "Problem is, ", "Also, ")) + but + ".")
    parts += rng.sample(_ASK_CAREER, rng.randint(1, 2))
    if rng.random() < 0.3:  # some people lead with the question and explain after
        parts = parts[-1:] + parts[:-1]
    text = " ".join(parts)
    history: list[tuple[str, str]] = []
    if rng.random() < 0.15:
        history.append((pick(rng, _CAREER_OPENERS), pick(rng, _CAREER_REPLY)))
    return chat(rng, noisy(rng, text), history=history)


# --- gadgets, the industry and the news: "<what I saw or own>. <my take>. <question back>" -----------

_GADGETS = (
    "foldable phones", "smart rings", "VR headsets", "e-readers", "robot vacuums", "smartwatches",
    "noise-cancelling headphones", "electric scooters", "smart speakers", "mechanical keyboards",
)  # fmt: skip
_COMPANIES = (
    "Apple",
    "Google",
    "Microsoft",
    "Meta",
    "Amazon",
    "Samsung",
    "Tesla",
    "OpenAI",
    "Nvidia",
    "Spotify",
)
_TOPICS = (
    "AI writing everyone's emails",
    "self-driving taxis",
    "kids having phones at 10",
    "working from home for good",
    "four-day weeks at tech firms",
    "social media age limits",
    "paying for every streaming service",
    "smart homes that listen all the time",
    "crypto coming back again",
    "robots in care homes",
    "AI art winning competitions",
)
_SAW = (
    "Saw that {company} is cutting {n}00 jobs again.",
    "{company} announced yet another subscription today.",
    "My brother just bought one of those {gadget} for {price} dollars.",
    "I've had my {gadget} for {n} months now.",
    "There was a whole segment on the radio this morning about {topic}.",
    "Everyone at work is arguing about {topic}.",
    "My {rel} keeps sending me articles about {topic}.",
    "Tried {gadget} at a friend's place last night.",
    "Apparently {company}'s new phone costs over {price} dollars now.",
    "Read somewhere that the average person checks their phone {big} times a day.",
    "Our office just banned laptops in meetings.",
)
_TAKE = (
    "Honestly it feels like a gimmick to me.",
    "I can't decide if that's exciting or a bit scary.",
    "I kind of love it, not going to lie.",
    "Feels like the hype will die down in a year.",
    "My gut says it's overpriced.",
    "I'm old enough to remember when none of this existed, haha.",
    "It makes me glad I'm not in that industry.",
    "Part of me wants one anyway.",
    "No idea what to make of it.",
    "",
)
_BACK = (
    "Would you buy one?",
    "What's your take?",
    "Am I being a grump?",
    "Do you think it'll last?",
    "Is it just me?",
    "What do you reckon, good or bad for normal people?",
    "Would you trust it?",
    "Where do you think this is all heading?",
    "Should I be worried?",
    "Which side are you on?",
)
_CHATTER_REPLY = (
    "Ha, there's always something new! What's on your mind?",
    "Tech news never sleeps. What did you see?",
    "I'm all ears, what's up?",
)


def _chatter(rng: random.Random) -> Messages:
    slots = {
        "company": pick(rng, _COMPANIES),
        "gadget": pick(rng, _GADGETS),
        "topic": pick(rng, _TOPICS),
        "rel": pick(rng, ("dad", "aunt", "flatmate", "boss", "grandma", "best friend")),
        "n": rng.randint(2, 9),
        "price": pick(rng, ("300", "450", "999", "1,200", "1,800", "250")),
        "big": pick(rng, ("96", "144", "150", "200", "80")),
    }
    parts = [s.format(**slots) for s in rng.sample(_SAW, rng.randint(1, 2))]
    parts += [pick(rng, _TAKE), pick(rng, _BACK)]
    if rng.random() < 0.25:
        parts.insert(0, pick(rng, ("Random thought:", "Ok so", "Hot take incoming.", "lol", "Hey!")))
    text = " ".join(p for p in parts if p)
    if rng.random() < 0.15:
        text += " " + pick(rng, ("🤔", "😅", "🙄", "haha"))
    history: list[tuple[str, str]] = []
    if rng.random() < 0.15:
        history.append((pick(rng, ("hey", "got a minute to chat?", "evening!")), pick(rng, _CHATTER_REPLY)))
    return chat(rng, noisy(rng, text), history=history)


# --- learning a language or a tool: where to learn, in what order, how long, with what ----------------

_LEARN_LANGS = (
    "Python", "JavaScript", "Rust", "Go", "Java", "Swift", "Kotlin", "C#", "TypeScript", "Ruby", "SQL",
    "C++", "PHP", "Scratch", "R", "Dart",
)  # fmt: skip
_TOOLS = ("React", "Docker", "Git", "Linux", "Excel macros", "Unity", "Figma", "AWS", "Django", "Flutter")
_LEARNER = (
    "I've done {n} weeks of an online course on {lang}",
    "My {rel} wants to pick up {lang} over the summer",
    "I'm {age} and completely new to programming",
    "Our school is starting a club for {lang} and I'm supposed to run it",
    "I learned a bit of {lang} at uni {n} years ago and forgot all of it",
    "I've got about {hours} hours a week to spare",
    "I'm a designer who keeps hearing about {tool}",
    "A colleague said I should learn {lang} before {tool}",
    "I want to make a small game with my kid, who is {kid}",
    "I commute {n}0 minutes each way by train",
)
_LEARN_ASK = (
    "Any free courses or YouTube channels you'd trust?",
    "What order would you learn things in: {lang} first, or {tool}?",
    "Do I need maths for {lang}, or is that a myth?",
    "Are those paid certificates worth it, or do employers not care?",
    "How do people stay motivated when it gets boring?",
    "Podcasts or books, what works better for you?",
    "Would {lang2} be a gentler start than {lang}?",
    "What's a realistic goal for the first {n} months?",
    "Should I bother with {tool} yet, or is that jumping ahead?",
    "Why is it even called {lang}, by the way?",
    "Is it normal to feel lost at this stage?",
    "Do companies around {city} still hire {lang} people?",
    "Can you learn this stuff on a phone, realistically?",
)


def _learning(rng: random.Random) -> Messages:
    lang, lang2 = rng.sample(_LEARN_LANGS, 2)
    slots = {
        "lang": lang,
        "lang2": lang2,
        "tool": pick(rng, _TOOLS),
        "rel": pick(rng, ("son", "daughter", "niece", "partner", "dad", "flatmate")),
        "age": rng.randint(14, 67),
        "n": rng.randint(2, 9),
        "hours": rng.randint(2, 12),
        "kid": pick(rng, ("8", "10", "eleven", "13", "nine")),
        "city": pick(rng, ("Leeds", "Austin", "Lyon", "Pune", "Cork", "Toronto", "Krakow", "Manila")),
    }
    parts = [pick(rng, _LEARNER).format(**slots) + "."]
    parts += [a.format(**slots) for a in rng.sample(_LEARN_ASK, rng.randint(1, 2))]
    if rng.random() < 0.2:  # the bare question, without the situation
        parts = parts[1:]
    return chat(rng, noisy(rng, " ".join(parts)))


SOURCES: tuple[Source, ...] = (
    make("gen:tech-careers", "advice", _career),
    make("gen:tech-chatter", "smalltalk", _chatter),
    make("gen:tech-learning", "advice", _learning),
)
