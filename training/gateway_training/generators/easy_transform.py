"""Easy: summarise, rewrite, translate, proofread, or extract from / reformat a long text given in the prompt.

The texts (news items, work emails, product reviews, meeting notes, travel blog posts) are assembled from
sentence templates, a few hundred to a few thousand characters, and carry numbers, dates, prices and times
on purpose: the task is to transform them, never to compute with them.

Over 600 lines on purpose: it is data (word lists, facts and sentence templates) with little logic;
splitting it would scatter one source's vocabulary over several files.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from gateway_training.generators.easy_common import chat, make, noisy, pick
from gateway_training.sources import Messages, Source

FIRST = (
    "Anna",
    "Marcus",
    "Priya",
    "Tom",
    "Sofia",
    "Daniel",
    "Fatima",
    "Lukas",
    "Grace",
    "Kenji",
    "Ines",
    "Omar",
    "Hannah",
    "Mateo",
    "Chloe",
    "Ben",
    "Aisha",
    "Jonas",
    "Maya",
    "Peter",
    "Rosa",
    "Sam",
    "Nadia",
    "Felix",
)
LAST = (
    "Baker",
    "Novak",
    "Okafor",
    "Schmidt",
    "Rossi",
    "Dubois",
    "Khan",
    "Martin",
    "Silva",
    "Walsh",
    "Lindqvist",
    "Moreau",
    "Patel",
    "Garcia",
    "Hughes",
    "Kowalski",
    "Fischer",
    "Tanaka",
    "Murphy",
    "Costa",
)
CITIES = (
    "Northbridge",
    "Leeds",
    "Ghent",
    "Aarhus",
    "Bristol",
    "Tampere",
    "Graz",
    "Halifax",
    "Cork",
    "Utrecht",
    "Lyon",
    "Porto",
    "Brno",
    "Dundee",
    "Bergen",
    "Modena",
    "Malmo",
    "Kingston",
    "Ballarat",
    "Eugene",
)
PLACES = (
    "the central library",
    "the old swimming pool",
    "Market Square",
    "the riverside park",
    "the bus station",
    "the town hall",
    "the covered market",
    "the community centre",
    "the football stadium",
    "the harbour",
)
ORGS = (
    "GreenStreets",
    "the Parents' Association",
    "Northline Buses",
    "BrightBuild Ltd",
    "the Rotary Club",
    "Harbour Foods",
    "the Chamber of Commerce",
    "Oakwood Construction",
    "the local wildlife trust",
    "CityBike",
)
PRODUCTS = (
    "air fryer",
    "robot vacuum",
    "electric toothbrush",
    "standing desk",
    "rain jacket",
    "espresso machine",
    "pair of running shoes",
    "baby stroller",
    "gaming headset",
    "e-reader",
    "office chair",
    "blender",
)
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "September", "October", "November")


def _context(rng: random.Random) -> dict[str, str]:
    cur = pick(rng, ("$", "£", "€"))
    names = rng.sample(FIRST, 5)
    month = pick(rng, MONTHS)
    return {
        "city": pick(rng, CITIES),
        "place": pick(rng, PLACES),
        "org": pick(rng, ORGS),
        "n1": f"{names[0]} {pick(rng, LAST)}",
        "n2": f"{names[1]} {pick(rng, LAST)}",
        "f1": names[0],
        "f2": names[1],
        "f3": names[2],
        "f4": names[3],
        "f5": names[4],
        "money": f"{cur}{rng.randint(2, 95)}.{rng.randint(1, 9)} million",
        "price": f"{cur}{rng.randint(9, 899)}",
        "small": f"{cur}{rng.randint(3, 25)}",
        "smaller": f"{cur}{rng.randint(1, 9)}",
        "pct": str(rng.randint(3, 45)),
        "num": f"{rng.randint(2, 60) * 50:,}",
        "years": str(rng.randint(3, 40)),
        "year": str(rng.randint(1978, 2022)),
        "weekday": pick(rng, WEEKDAYS),
        "month": month,
        "date": f"{rng.randint(1, 28)} {month}",
        "date2": f"{pick(rng, MONTHS)} {rng.randint(1, 28)}",
        "date3": f"{rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/{rng.randint(2024, 2026)}",
        "time": pick(rng, ("9:30", "10 am", "14:00", "6.30 pm", "noon", "7 pm", "11:15")),
        "months": str(rng.randint(3, 30)),
        "days": str(rng.randint(2, 14)),
        "hours": str(rng.randint(4, 40)),
        "stars": str(rng.randint(2, 5)),
        "product": pick(rng, PRODUCTS),
        "room": pick(rng, ("B2", "4.12", "3A", "Oak", "114")),
        "project": pick(
            rng,
            (
                "website relaunch",
                "spring catalogue",
                "office move",
                "Q3 report",
                "client workshop",
                "onboarding handbook",
                "summer fair",
                "new booking system",
            ),
        ),
        "street": pick(
            rng, ("Mill Lane", "King Street", "Station Road", "Rue Verte", "Elm Avenue", "Harbour Walk")
        ),
        "phone": f"0{rng.randint(100, 999)} {rng.randint(100, 999)} {rng.randint(1000, 9999)}",
    }


NEWS = (
    "The city council of {city} approved a plan on {weekday} to renovate {place}, with a budget of {money}.",
    "According to {n1}, who chairs the planning committee, work should begin on {date} "
    "and last about {months} months.",
    "Residents have raised concerns about noise and traffic during the construction period.",
    "{org} said it expected around {num} visitors in the first year after the reopening.",
    "Local shop owners welcomed the news, saying footfall had dropped by {pct}% since {year}.",
    "A public consultation will be held at the town hall on {date2} at {time}.",
    "The project is part of a wider effort to make the city centre greener and easier to walk around.",
    "{n2}, a teacher who has lived in {city} for {years} years, said: \"It's about time. "
    'The old building was falling apart."',
    "Critics argue that the money would be better spent on affordable housing.",
    "The last major renovation took place in {year}, when the roof was replaced.",
    "Entry will cost {small} for adults and {smaller} for children, "
    "with free entry on the first Sunday of each month.",
    "Heavy rain on {weekday} caused delays on several bus lines, and {org} apologised for the disruption.",
    "Opposition councillors have asked for a full breakdown of the costs before the final vote on {date2}.",
    "Volunteers from {org} planted {num} trees along {street} last spring.",
    'The mayor described the plan as "a once-in-a-generation opportunity" for the town.',
    "Parking on {street} will be restricted from {date} until the end of the works.",
    "The council received more than {num} comments during the first round of consultation.",
    "A temporary venue will open in the former post office so that services can continue.",
    "The design was chosen after a competition that attracted {days} entries from across the country.",
    "Some residents started a petition asking the council to keep the original facade.",
    "Construction firm {org} has promised to hire local apprentices for part of the job.",
    "Updates will be posted on the council's website every two weeks.",
    "The announcement comes a year after a similar project in a neighbouring town ran over budget.",
    "Cyclists' groups asked for a secure bike shelter to be included in the new design.",
    "Officials said the building would be fully accessible, with a lift and step-free entrances.",
    "Weekend markets will move to {street} while the square is closed.",
)
EMAIL = (
    "I hope you had a good weekend.",
    "Just a quick update on the {project}.",
    "We've received the quote from {org}: {price} for the whole job, including delivery.",
    "Could you send me the signed contract by {date}?",
    "{f3} will be out of the office from {date} to {date2}.",
    "Please remember to book room {room} for Thursday at {time}.",
    "I've attached the slides from last week's meeting.",
    "Let me know if anything is unclear.",
    "The client asked whether we can move the deadline to {date3}.",
    "{f4} has agreed to take over the design work while {f3} is away.",
    "The printer on the second floor is broken again; IT said a technician will come on {weekday}.",
    "We still need someone to order the catering for the {project} kick-off, about {days} people.",
    "Can you check the draft budget and tell me by {weekday} if it looks right?",
    "Reminder: timesheets are due at the end of the month.",
    "Thanks again for staying late on {weekday}, it really helped.",
    "I spoke to {f5} from {org} and they are happy with the first version.",
    "The new booking system goes live on {date2}, so please don't use the old spreadsheet after that.",
    "If you can't make the meeting, please send your updates to {f4} beforehand.",
    "The invoice from {org} ({price}) is still unpaid; could finance look into it?",
    "I'll be working from home on {weekday} but reachable on {phone}.",
    "Please update the shared folder with the latest version of the contract.",
    "We should also think about who presents the results at the team meeting.",
)
REVIEW = (
    "I bought this {product} in {month} for {price} after reading a lot of reviews.",
    "Delivery took {days} days, which was a bit longer than promised, "
    "but the box arrived in perfect condition.",
    "It arrived well packed and was ready to use straight away.",
    "The build quality feels solid for the price.",
    "It does exactly what the description promised.",
    "My only complaint is the price.",
    "Customer service was friendly when I called about a missing part.",
    "It looks even better than in the photos.",
    "After {months} weeks of daily use, it still works like new.",
    "The instructions were confusing and badly translated.",
    "My partner thinks it was too expensive, but I'm happy with it.",
    "Cleaning it is a bit of a pain.",
    "I compared it with a cheaper model from {org} and this one is clearly better.",
    "It comes in three colours; I picked the grey one.",
    "The packaging used far too much plastic.",
    "Overall I'd give it {stars} stars out of 5.",
    "I would buy it again, especially if it goes on sale.",
    "The warranty is two years, which gives some peace of mind.",
    "It's lighter than I expected.",
    "The size guide was a bit confusing, so check it twice.",
    "My kids love it too.",
)
NOTES = (
    "{f1} reported that the {project} is on track.",
    "Action: {f2} to send the budget draft by {date}.",
    "Decision: the launch moves to {date2}.",
    "{f3} raised the issue of the broken air conditioning in room {room}.",
    "Action: {f4} to call {org} about the delayed delivery.",
    "The team agreed to hold the retrospective on {weekday} at {time}.",
    "Budget so far: {price} spent on printing, still within the plan.",
    "{f5} will join the sales team from {date}.",
    "Action: everyone to fill in the holiday planner before the end of {month}.",
    "Customer feedback on the new menu has been mostly positive.",
    "{f1} and {f2} will visit the client in {city} on {date3}.",
    "Open question: do we need a second laptop for the new intern?",
    "Action: {f3} to book the venue for the summer fair.",
    "The next meeting is on {date2} at {time} in room {room}.",
    "Decision: we keep the current supplier for another year.",
    "{f4} shared the survey results: {pct}% of users want a dark mode.",
    "Action: {f5} to update the website FAQ.",
)
BLOG = (
    "Last {month} we spent {days} days in {city}, and it was one of our favourite trips so far.",
    "We stayed in a small guesthouse on {street}, run by a lovely couple called {f1} and {f2}.",
    "The room cost {price} for the whole stay, breakfast included.",
    "On the first day it rained, so we visited {place} instead.",
    "The food was incredible: fresh bread every morning and the best soup I've ever had.",
    "We took the {time} train to the coast and walked for about {hours} kilometres along the cliffs.",
    "The locals were friendly, even when our attempts at the language were terrible.",
    "If you go, book the boat tour in advance; it sold out on the day we wanted to go.",
    "Our favourite café was a tiny place near {place} where a coffee cost {smaller}.",
    "We met {f3}, a fisherman who told us stories about the harbour back in {year}.",
    "The museum is free on Sundays, which we only found out on our last day.",
    "Next time we would stay longer and rent bikes.",
    "My partner got sunburnt on day two, so pack sunscreen!",
    "Overall, it was a relaxing and surprisingly affordable holiday.",
)
GENRES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("news", NEWS),
    ("email", EMAIL),
    ("review", REVIEW),
    ("notes", NOTES),
    ("blog", BLOG),
)


def _paragraphs(rng: random.Random, sentences: list[str]) -> str:
    out: list[str] = []
    while sentences:
        k = rng.randint(2, 5)
        out.append(" ".join(sentences[:k]))
        sentences = sentences[k:]
    return "\n\n".join(out)


def text_of(rng: random.Random, genre: str | None = None) -> tuple[str, str]:
    """(kind, text): one generated text of the given genre (or a random one), 300-3000 characters."""
    kind, pool = pick(rng, GENRES) if genre is None else next(g for g in GENRES if g[0] == genre)
    ctx = _context(rng)
    k = rng.randint(4, len(pool))
    # keep the pool's order (written roughly as a writer would order them), so the text reads naturally
    chosen = sorted(rng.sample(range(len(pool)), k))
    sentences = [pool[i].format(**ctx) for i in chosen]
    if kind == "email":
        greeting = pick(
            rng, ("Hi {f2},", "Dear {n2},", "Hello team,", "Hey {f2}!", "Good morning all,")
        ).format(**ctx)
        sign = pick(rng, ("Best,", "Thanks,", "Kind regards,", "Cheers,", "Many thanks,"))
        return kind, f"{greeting}\n\n{_paragraphs(rng, sentences)}\n\n{sign}\n{ctx['f1']}"
    if kind == "notes":
        attendees = ", ".join(ctx[k] for k in ("f1", "f2", "f3", "f4"))
        head = f"{ctx['project'].capitalize()} weekly sync, {ctx['date']}\nAttendees: {attendees}"
        return kind, head + "\n\n" + "\n".join(f"- {s}" for s in sentences)
    if kind == "news" and rng.random() < 0.6:
        head = pick(
            rng,
            (
                "{city} approves plan for {place}",
                "Big changes ahead for {place}",
                "Council vote on {place} set",
            ),
        )
        head = head.format(**ctx)
        return kind, (head.upper() if rng.random() < 0.2 else head) + "\n\n" + _paragraphs(rng, sentences)
    return kind, _paragraphs(rng, sentences)


def _garble(rng: random.Random, text: str) -> str:
    """Typical writing mistakes for the proofreading requests."""
    swaps = (
        (" their ", " there "),
        ("It's", "Its"),
        (" we've ", " weve "),
        (" it's ", " its "),
        (" I'm ", " im "),
        (" which ", " wich "),
        (" until ", " untill "),
        (" received ", " recieved "),
        (" a lot ", " alot "),
        (" the ", " teh "),
        (" definitely ", " definately "),
        (", ", " "),
        (" is ", " are "),
    )
    for a, b in swaps:
        if a in text and rng.random() < 0.6:
            text = text.replace(a, b, rng.randint(1, 3))
    return text


def _frame(rng: random.Random, instruction: str, text: str) -> str:
    """Puts the instruction before or after the text, with one of the delimiters people use."""
    fences = (
        ('"""\n', '\n"""'),
        ("---\n", "\n---"),
        ("Text:\n", ""),
        ('"', '"'),
        ("", ""),
        ("<<<\n", "\n>>>"),
    )
    start, end = pick(rng, fences)
    body = f"{start}{text}{end}"
    if rng.random() < 0.75:
        return f"{instruction}\n\n{body}"
    return f"{body}\n\n{instruction}"


KIND_WORD = {
    "news": ("article", "news story", "text"),
    "email": ("email", "message", "mail"),
    "review": ("review", "product review", "text"),
    "notes": ("meeting summary", "set of meeting notes", "write-up"),
    "blog": ("blog post", "travel post", "text"),
}
SUMMARISE = (
    "Summarise this {w} in {n} bullet points.",
    "TL;DR please",
    "Give me the gist of this {w}.",
    "Can you shorten this {w} to one paragraph?",
    "What's the main point of this {w}?",
    "summarize:",
    "Summarise the following {w} for a busy manager.",
    "Key takeaways from this {w}?",
    "Please write a two-sentence summary of the {w} below.",
    "I don't have time to read this. Short version?",
    "Summarize the {w} below in plain language, max {n} sentences.",
    "Give me a one-line summary of this {w}.",
    "Condense this {w} into a short paragraph for our newsletter.",
    "What is this {w} about? Keep it brief.",
)
REWRITE = (
    "Rewrite this {w} to sound more polite.",
    "Make this {w} more formal.",
    "Make this more friendly and casual.",
    "Paraphrase the following {w}.",
    "Can you make this {w} shorter without losing anything important?",
    "Fix the grammar and spelling in this {w}.",
    "Proofread this please.",
    "Make it sound more professional.",
    "Rewrite this {w} so a {age}-year-old could understand it.",
    "Change the tone of this {w} to enthusiastic.",
    "Turn this {w} into a LinkedIn post.",
    "Rewrite this in the third person.",
    "Please reword this {w}, it sounds too harsh.",
    "Correct any typos and awkward sentences in the {w} below.",
    "Make this {w} sound less robotic.",
    "Rewrite this as a short, cheerful announcement.",
    "Simplify the language of this {w}.",
)
TRANSLATE = (
    "Translate this {w} into {lang}.",
    "Can you translate the following to {lang}?",
    "{lang} version of this please.",
    "Translate to {lang}, keep the formatting.",
    "Please translate the {w} below into {lang} for my colleague.",
    "translate into {lang}",
    "I need this {w} in {lang}. Informal tone is fine.",
    "Could you put this into {lang}? Keep names and dates as they are.",
)
EXTRACT = (
    "Turn this into a table.",
    "List all the dates mentioned in this {w}.",
    "Extract every price or amount of money mentioned.",
    "Pull out the names of all the people mentioned.",
    "Which dates and deadlines appear in this {w}? List them.",
    "Turn the {w} below into bullet points.",
    "Put the main facts of this {w} into a short list.",
    "Make a list of the places and organisations named in this {w}.",
)
# Extraction requests that only make sense for some kinds of text.
EXTRACT_BY_KIND = {
    "email": (
        "Make a bullet list of the action items in this {w}.",
        "Make a checklist from this {w}.",
        "Extract the contact details from this {w}.",
        "What am I being asked to do in this {w}? Bullet points please.",
    ),
    "notes": (
        "Turn this {w} into a to-do list.",
        "Format this as a markdown table with columns: who, what, when.",
        "Give me a table of the people and what they're responsible for.",
        "List only the decisions from this {w}.",
    ),
    "review": (
        "List the pros and cons mentioned in this {w}.",
        "Turn this {w} into a short table: aspect, opinion.",
    ),
    "news": (
        "Make a timeline of the dates in this {w}, as bullet points.",
        "Who is quoted in this {w}? List them.",
    ),
}
LANGS = (
    "French",
    "German",
    "Spanish",
    "Italian",
    "Portuguese",
    "Dutch",
    "Polish",
    "Japanese",
    "Turkish",
    "Swedish",
    "simple English",
    "Greek",
    "Czech",
    "Korean",
    "Ukrainian",
)
SYSTEM_EDIT = (
    "You are a helpful writing assistant.",
    "You are an editor. Keep the author's meaning.",
    "You help office workers with their emails.",
    "You are a helpful assistant.",
)


def _task(
    templates: tuple[str, ...],
    genres: tuple[str, ...] | None = None,
    garble: bool = False,
    extra: dict[str, tuple[str, ...]] | None = None,
) -> Callable[[random.Random], Messages]:
    """A source drawing one of the generated texts with an instruction from templates (plus extra[kind])."""

    def draw(rng: random.Random) -> Messages:
        kind, text = text_of(rng, pick(rng, genres) if genres else None)
        choices = templates + extra.get(kind, ()) if extra else templates
        instruction = pick(rng, choices).format(
            w=pick(rng, KIND_WORD[kind]),
            n=rng.randint(2, 6),
            age=pick(rng, (9, 10, 12, 13, 14)),
            lang=pick(rng, LANGS),
        )
        if garble and ("grammar" in instruction or "typos" in instruction or "Proofread" in instruction):
            text = _garble(rng, " " + text)[1:]
        prompt = _frame(rng, noisy(rng, instruction), text)
        if rng.random() < 0.12:  # the text came earlier; the newest turn asks for another transformation
            follow = pick(
                rng,
                (
                    "now make it shorter",
                    "thanks! and in Spanish?",
                    "great, now as bullet points",
                    "perfect. can you make it a bit friendlier?",
                    "ok, now a one-line version",
                ),
            )
            return chat(rng, follow, history=[(prompt, "Here it is: ...")])
        if rng.random() < 0.2:
            return chat(rng, prompt, system=pick(rng, SYSTEM_EDIT))
        return chat(rng, prompt, system_rate=0.0)

    return draw


DE_NEWS = (
    "Der Gemeinderat von {stadt} hat am {tag} beschlossen, {ort} für {geld} zu sanieren.",
    "Laut {n1} sollen die Arbeiten am {datum} beginnen und etwa {monate} Monate dauern.",
    "Anwohner befürchten Lärm und mehr Verkehr während der Bauzeit.",
    "Die Eintrittspreise liegen künftig bei {klein} für Erwachsene.",
    "Eine Bürgerversammlung findet am {datum2} um {uhr} Uhr statt.",
    "Die letzte große Renovierung war im Jahr {jahr}.",
    "Viele Geschäfte in der Innenstadt begrüßen den Plan.",
    "Kritiker meinen, das Geld wäre im Wohnungsbau besser angelegt.",
    "Die Stadt rechnet mit rund {zahl} Besuchern im ersten Jahr.",
    "Parken in der {strasse} ist bis Ende der Arbeiten verboten.",
    "Die Pläne liegen ab {datum} im Rathaus aus.",
    "Während der Bauzeit zieht die Bibliothek vorübergehend in die ehemalige Post am Bahnhof um.",
    "Der Radfahrerverband fordert überdachte Stellplätze und eine bessere Beleuchtung der Zufahrt.",
    "Die Bürgermeisterin sprach von einer großen Chance für die ganze Region und dankte allen Beteiligten.",
    "Die Opposition verlangt vor der Abstimmung am {datum2} eine genaue Aufstellung aller Kosten.",
    "Ehrenamtliche haben im Frühjahr bereits {zahl} Blumenzwiebeln entlang der {strasse} gepflanzt.",
    "Informationen zum Stand der Arbeiten sollen alle zwei Wochen auf der Website der Stadt erscheinen.",
    "Einige Anwohner sammeln Unterschriften, damit die historische Fassade erhalten bleibt.",
)
DE_MAIL = (
    "Kurz zum Stand beim Projekt: Das Angebot von {firma} liegt bei {preis}.",
    "Kannst du mir den unterschriebenen Vertrag bis {datum} schicken?",
    "{v3} ist vom {datum} bis zum {datum2} im Urlaub.",
    "Bitte denk daran, den Besprechungsraum für Donnerstag zu buchen.",
    "Die neuen Laptops sind da, die Lieferung hat {tage} Tage gedauert.",
    "Den neuen Beamer habe ich im {monat} für {preis} bestellt, er ist gut angekommen.",
    "Der Support von {firma} war freundlich und hat schnell geantwortet.",
    "{v4} schickt bis {datum} den Entwurf des Budgets.",
    "Nächstes Treffen: {datum2}, {uhr} Uhr, Raum {raum}.",
    "Die Rechnung von {firma} ist noch offen.",
    "Ich arbeite am Freitag von zu Hause, bin aber erreichbar.",
    "Danke nochmal für deine Hilfe letzte Woche!",
    "Der Kunde fragt, ob wir die Abgabe auf den {datum2} verschieben können, weil sein Team im Urlaub ist.",
    "Für das Sommerfest brauchen wir noch jemanden, der sich um Getränke und Musik kümmert.",
    "Die Folien vom letzten Treffen habe ich dir in den gemeinsamen Ordner gelegt.",
    "Der Drucker im zweiten Stock ist schon wieder kaputt, die IT kommt erst am Montag.",
    "Bitte trag deine Urlaubstage bis Ende {monat} in den Teamkalender ein.",
    "Falls du am Termin nicht kannst, schick deine Punkte bitte vorher an {v3}.",
    "Das neue Buchungssystem startet am {datum}, danach bitte nicht mehr die alte Tabelle benutzen.",
)
DE_TASK = (
    "Fasse den folgenden Text in {n} Stichpunkten zusammen.",
    "Kannst du das kürzer formulieren?",
    "Fass das bitte kurz zusammen:",
    "Formuliere diese Nachricht höflicher.",
    "Übersetze den Text ins Englische.",
    "Korrigiere Rechtschreibung und Grammatik.",
    "Mach eine Liste mit allen Aufgaben aus diesem Text.",
    "Schreib das etwas lockerer.",
    "Worum geht es in diesem Text? Kurz bitte.",
    "Erstelle eine Tabelle mit Personen und Terminen aus dem Text.",
    "Übersetze das bitte ins Französische.",
    "Formuliere den Text so, dass ein Kind ihn versteht.",
    "Welche Termine werden im Text genannt?",
)
DE_NAMES = ("Anna", "Jonas", "Lena", "Felix", "Miriam", "Tobias", "Sabine", "Paul", "Katrin", "Yusuf")


def _transform_de(rng: random.Random) -> Messages:
    v = rng.sample(DE_NAMES, 4)
    monat = pick(rng, ("März", "Mai", "Juli", "Oktober", "Dezember", "Januar"))
    ctx = {
        "stadt": pick(rng, ("Freiburg", "Kassel", "Linz", "Bremen", "Jena", "Winterthur", "Lübeck")),
        "tag": pick(rng, ("Montag", "Dienstag", "Mittwoch", "Donnerstag")),
        "ort": pick(rng, ("das alte Hallenbad", "die Stadtbibliothek", "den Marktplatz")),
        "geld": f"{rng.randint(2, 40)},{rng.randint(1, 9)} Millionen Euro",
        "n1": f"{v[0]} {pick(rng, ('Maier', 'Schulz', 'Becker', 'Wolf'))}",
        "datum": f"{rng.randint(1, 28)}. {monat}",
        "datum2": f"{rng.randint(1, 28):02d}.{rng.randint(1, 12):02d}.",
        "monate": str(rng.randint(3, 24)),
        "klein": f"{rng.randint(3, 15)} Euro",
        "uhr": pick(rng, ("18", "19:30", "10", "14")),
        "v2": v[1],
        "v3": v[2],
        "v4": v[3],
        "firma": pick(rng, ("Bau Huber GmbH", "Elektro Kraus", "Grünwerk")),
        "preis": f"{rng.randint(20, 4000)} €",
        "tage": str(rng.randint(2, 12)),
        "monat": monat,
        "stunden": str(rng.randint(5, 30)),
        "jahr": str(rng.randint(1975, 2020)),
        "raum": pick(rng, ("2.14", "B1", "Eiche")),
        "zahl": f"{rng.randint(5, 90) * 1000:,}".replace(",", "."),
        "strasse": pick(rng, ("Bahnhofstraße", "Lindenallee", "Hauptstraße")),
    }
    pool = DE_NEWS if rng.random() < 0.5 else DE_MAIL
    chosen = sorted(rng.sample(range(len(pool)), rng.randint(4, len(pool))))
    sentences = [pool[i].format(**ctx) for i in chosen]
    text = _paragraphs(rng, sentences)
    if pool is DE_MAIL:
        text = f"Hallo {ctx['v2']},\n\n{text}\n\nViele Grüße\n{ctx['n1'].split()[0]}"
    instruction = noisy(rng, pick(rng, DE_TASK).format(n=rng.randint(2, 5)), "de")
    return chat(rng, _frame(rng, instruction, text), lang="de", system_rate=0.15)


ES_TASK = (
    "Resume este texto en {n} puntos.",
    "Traduce esto al español, por favor.",
    "¿Me haces un resumen corto de este {w}?",
    "Reescribe este correo de forma más formal.",
    "Haz una lista con las tareas que aparecen aquí.",
    "Tradúcelo al español manteniendo el formato.",
    "Corrige la gramática de este texto en inglés.",
    "¿De qué trata este {w}? En dos frases.",
    "Pon esta información en una tabla.",
    "Hazlo más corto y amable.",
)
ES_WORD = {"news": "artículo", "email": "correo", "review": "comentario", "notes": "acta", "blog": "artículo"}


def _transform_es(rng: random.Random) -> Messages:
    kind, text = text_of(rng)
    instruction = noisy(rng, pick(rng, ES_TASK).format(n=rng.randint(2, 5), w=ES_WORD[kind]), "es")
    return chat(rng, _frame(rng, instruction, text), lang="es", system_rate=0.15)


SOURCES: tuple[Source, ...] = (
    make("gen:transform-summarise", "transform", _task(SUMMARISE)),
    make("gen:transform-rewrite", "transform", _task(REWRITE, garble=True)),
    make("gen:transform-translate", "transform", _task(TRANSLATE)),
    make(
        "gen:transform-extract",
        "transform",
        _task(EXTRACT, genres=("email", "notes", "news", "review"), extra=EXTRACT_BY_KIND),
    ),
    make("gen:transform-de", "transform", _transform_de),
    make("gen:transform-es", "transform", _transform_es),
)
