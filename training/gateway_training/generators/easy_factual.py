"""Easy: short factual questions, definitions, and "explain X simply" requests (English, French, Italian,
Portuguese). Lookups of well-known facts: nothing to compute, even when the question holds a number or a year.

Over 600 lines on purpose: it is data (word lists, facts and sentence templates) with little logic;
splitting it would scatter one source's vocabulary over several files.
"""

from __future__ import annotations

import random

from gateway_training.generators.easy_common import aside, chat, make, noisy, pick
from gateway_training.sources import Messages, Source

COUNTRIES = (
    "Australia",
    "Canada",
    "Kenya",
    "Peru",
    "Norway",
    "Vietnam",
    "Morocco",
    "New Zealand",
    "Portugal",
    "Chile",
    "Hungary",
    "Ghana",
    "Mongolia",
    "Croatia",
    "Thailand",
    "Iceland",
    "Uruguay",
    "Nepal",
    "Ireland",
    "Egypt",
    "Finland",
    "Colombia",
    "South Korea",
    "Switzerland",
    "Tanzania",
    "Bolivia",
    "Latvia",
    "Jordan",
    "Cuba",
)
BOOKS = (
    "Pride and Prejudice",
    "One Hundred Years of Solitude",
    "The Hobbit",
    "Moby-Dick",
    "Frankenstein",
    "The Little Prince",
    "Don Quixote",
    "Crime and Punishment",
    "To Kill a Mockingbird",
    "Jane Eyre",
    "The Great Gatsby",
    "Things Fall Apart",
    "The Odyssey",
    "Dracula",
    "Little Women",
    "Brave New World",
    "The Name of the Rose",
    "Wuthering Heights",
    "The Catcher in the Rye",
    "Anna Karenina",
    "Beloved",
)
PAINTINGS = (
    "the Mona Lisa",
    "The Starry Night",
    "Girl with a Pearl Earring",
    "The Scream",
    "Guernica",
    "The Birth of Venus",
    "The Night Watch",
    "Water Lilies",
    "The Persistence of Memory",
)
EVENTS = (
    "the fall of the Berlin Wall",
    "the first Moon landing",
    "the French Revolution",
    "the Great Fire of London",
    "the first modern Olympic Games",
    "the end of World War II",
    "the signing of the Magna Carta",
    "the invention of the printing press",
    "the Chernobyl accident",
    "the Boston Tea Party",
    "the first flight of the Wright brothers",
    "the opening of the Channel Tunnel",
    "the Battle of Hastings",
)
EVENTS_VERB = (
    "the Titanic sink",
    "the first iPhone come out",
    "the euro become a currency",
    "Nelson Mandela become president",
    "women get the vote in New Zealand",
    "the Beatles break up",
    "Pluto stop being a planet",
    "Rome fall",
    "Columbus reach the Americas",
    "the Berlin Wall go up",
    "India become independent",
    "the Eiffel Tower open",
)
LANDMARKS = (
    "the Eiffel Tower",
    "Machu Picchu",
    "the Taj Mahal",
    "Angkor Wat",
    "the Colosseum",
    "Petra",
    "the Golden Gate Bridge",
    "Mount Kilimanjaro",
    "the Sagrada Familia",
    "Uluru",
    "Table Mountain",
)
THINGS = (
    "the largest ocean",
    "the longest river in Africa",
    "the smallest planet",
    "the tallest animal",
    "the hottest planet",
    "the biggest desert",
    "the most spoken language",
    "the deepest lake",
)
TRIVIA = (
    "What's the capital of {country}?",
    "capital of {country}?",
    "Do you know the capital city of {country}?",
    "I always forget, what's the capital of {country}?",
    "Who wrote {book}?",
    "who is the author of {book}",
    "{book} - who wrote it and when?",
    "Who painted {painting}?",
    "When did {event} happen?",
    "In which year did {event_verb}?",
    "When did {event_verb}?",
    "Where is {landmark}?",
    "How tall is {landmark}?",
    "What currency does {country} use?",
    "What language do people speak in {country}?",
    "What is {thing}?",
    "Which is {thing} on Earth?",
    "How many players are on a {sport} team?",
    "How many moons does {planet} have?",
    "What's the population of {country}, roughly?",
    "Who was the first person to walk on the Moon?",
    "What's the national animal of {country}?",
    "Who invented the telephone?",
    "What year was {landmark} built?",
    "Is {landmark} in {country}?",
    "What's the boiling point of water in Fahrenheit?",
    "How many bones are in the human body?",
    "Who discovered penicillin?",
    "What's the chemical symbol for {element}?",
    "What time zone is {country} in?",
    "How long is a marathon?",
    "Which country hosted the {year} Olympics?",
    "Who won the {year} World Cup?",
    "What did people use before paper money?",
    "Which continent is {country} in?",
    "When is {country}'s national day?",
)
SPORTS = (
    "football",
    "basketball",
    "volleyball",
    "rugby union",
    "ice hockey",
    "water polo",
    "cricket",
    "baseball",
)
PLANETS = ("Mars", "Jupiter", "Saturn", "Neptune", "Uranus", "Earth")
ELEMENTS = ("gold", "iron", "sodium", "potassium", "silver", "tin", "lead", "helium", "copper", "mercury")
YEARS = ("1992", "2000", "2004", "2008", "2012", "1998", "2016", "1988", "2010", "2014", "1996")


def _trivia(rng: random.Random) -> Messages:
    text = pick(rng, TRIVIA).format(
        country=pick(rng, COUNTRIES),
        book=pick(rng, BOOKS),
        painting=pick(rng, PAINTINGS),
        event=pick(rng, EVENTS),
        event_verb=pick(rng, EVENTS_VERB),
        landmark=pick(rng, LANDMARKS),
        thing=pick(rng, THINGS),
        sport=pick(rng, SPORTS),
        planet=pick(rng, PLANETS),
        element=pick(rng, ELEMENTS),
        year=pick(rng, YEARS),
    )
    if rng.random() < 0.15:  # a follow-up lookup after an earlier one
        first = pick(rng, TRIVIA).format(
            country=pick(rng, COUNTRIES),
            book=pick(rng, BOOKS),
            painting=pick(rng, PAINTINGS),
            event=pick(rng, EVENTS),
            event_verb=pick(rng, EVENTS_VERB),
            landmark=pick(rng, LANDMARKS),
            thing=pick(rng, THINGS),
            sport=pick(rng, SPORTS),
            planet=pick(rng, PLANETS),
            element=pick(rng, ELEMENTS),
            year=pick(rng, YEARS),
        )
        follow = pick(rng, ("and {x}?", "ok, and what about {x}?", "thanks! same question for {x}"))
        return chat(rng, follow.format(x=pick(rng, COUNTRIES)), history=[(first, "Here you go: ...")])
    return chat(rng, noisy(rng, aside(rng, rate=0.15) + text))


TERMS = (
    "inflation",
    "a mortgage",
    "photosynthesis",
    "an API",
    "a haiku",
    "a sonnet",
    "GDP",
    "a black hole",
    "a vaccine",
    "compound interest",
    "a carbon footprint",
    "a sourdough starter",
    "an index fund",
    "a VPN",
    "a meme",
    "the placebo effect",
    "a gig economy",
    "a filibuster",
    "a cover letter",
    "a podcast",
    "biodiversity",
    "a mutual fund",
    "jet lag",
    "a credit score",
    "a cold front",
    "an allergy",
    "a galaxy",
    "a pension",
    "an ecosystem",
    "minimalism",
    "a food desert",
    "net neutrality",
    "a time zone",
    "a leap year",
)
PAIRS = (
    ("weather", "climate"),
    ("an alligator", "a crocodile"),
    ("baking soda", "baking powder"),
    ("a virus", "bacteria"),
    ("a lake", "a pond"),
    ("a latte", "a cappuccino"),
    ("a rabbit", "a hare"),
    ("a debit card", "a credit card"),
    ("England", "Great Britain"),
    ("affect", "effect"),
    ("a town", "a city"),
    ("jam", "jelly"),
    ("a tornado", "a hurricane"),
    ("a moth", "a butterfly"),
)
IDIOMS = (
    "break the ice",
    "spill the beans",
    "under the weather",
    "a piece of cake",
    "once in a blue moon",
    "bite the bullet",
    "hit the sack",
    "the ball is in your court",
    "cost an arm and a leg",
)
ABBREVIATIONS = ("NASA", "UNESCO", "RSVP", "ASAP", "FAQ", "DIY", "ETA", "PIN", "GPS", "CEO", "BBQ", "AKA")
DEFINE = (
    "What is {term}?",
    "what does {term} mean",
    "Define {term}.",
    "Can you tell me what {term} is?",
    "What's {term}, in simple words?",
    "what is {term} exactly",
    "Quick definition of {term} please.",
    "What's the difference between {a} and {b}?",
    "{a} vs {b}, what's the difference?",
    "Is {a} the same as {b}?",
    "What does the idiom '{idiom}' mean?",
    'meaning of "{idiom}"?',
    "What does {abbr} stand for?",
    "{abbr} stands for what?",
    "Where does the phrase '{idiom}' come from?",
)


def _definitions(rng: random.Random) -> Messages:
    a, b = pick(rng, PAIRS)
    text = pick(rng, DEFINE).format(
        term=pick(rng, TERMS), a=a, b=b, idiom=pick(rng, IDIOMS), abbr=pick(rng, ABBREVIATIONS)
    )
    return chat(rng, noisy(rng, text))


TOPICS = (
    "how rainbows form",
    "why leaves change colour in autumn",
    "what inflation is",
    "how vaccines work",
    "photosynthesis",
    "why we have seasons",
    "how a bill becomes a law",
    "why cats purr",
    "what a blockchain is",
    "how airplanes stay in the air",
    "why the sea is salty",
    "what DNA is",
    "how a fridge keeps food cold",
    "why we dream",
    "what the stock market is",
    "how bees make honey",
    "why onions make you cry",
    "how the internet works",
    "what a solar eclipse is",
    "why bread goes stale",
    "how tides work",
    "why we get goosebumps",
    "what an election recount is",
    "how soap cleans your hands",
    "what jet lag is",
    "why the Moon has phases",
    "how a credit score works",
    "why we yawn",
    "what recycling actually does",
    "how volcanoes erupt",
    "why ice floats",
    "what a calorie is",
    "how hybrid cars save fuel",
)
EXPLAIN = (
    "Explain {topic} simply.",
    "Explain {topic} in one sentence.",
    "Can you explain {topic} like I'm five?",
    "ELI5: {topic}",
    "Give me a short, simple explanation of {topic} for a {age}-year-old.",
    "In two or three sentences, explain {topic}.",
    "I never understood {topic}. Explain it without jargon?",
    "explain {topic} in plain English pls",
    "My kid asked me {topic} and I had no idea. Simple answer?",
    "What's the simplest way to explain {topic}?",
    "Summarise {topic} in one line.",
    "Quick explanation of {topic}? Nothing too technical.",
    "Explain {topic} step by step, but keep it simple.",
    "Tell me briefly {topic}.",
    "Why is it that {why}?",
    "Why do {why2}? Short answer please.",
)
WHY = (
    "bread rises",
    "the sea is salty",
    "cats land on their feet",
    "we have leap years",
    "ice floats",
    "planes leave white trails",
    "popcorn pops",
    "the Moon looks bigger near the horizon",
    "onions sting",
)
WHY2 = (
    "birds fly south in winter",
    "our fingers wrinkle in water",
    "dogs wag their tails",
    "leaves fall",
    "people snore",
    "stars twinkle",
    "we get hiccups",
    "bananas turn brown",
)


def _explain(rng: random.Random) -> Messages:
    text = pick(rng, EXPLAIN).format(
        topic=pick(rng, TOPICS), age=rng.randint(5, 12), why=pick(rng, WHY), why2=pick(rng, WHY2)
    )
    if rng.random() < 0.15:
        history = [(text, "Sure! In short: ...")]
        return chat(
            rng,
            pick(rng, ("even simpler?", "thanks, now in one sentence", "cool, and why?")),
            history=history,
        )
    return chat(rng, noisy(rng, text))


FR_COUNTRIES = (
    "du Canada",
    "du Pérou",
    "de la Norvège",
    "du Kenya",
    "de l'Australie",
    "du Portugal",
    "de la Hongrie",
    "du Maroc",
    "de l'Islande",
    "du Chili",
    "de la Croatie",
    "du Vietnam",
)
FR_TOPICS = (
    "la photosynthèse",
    "l'inflation",
    "les marées",
    "les saisons",
    "un vaccin",
    "un arc-en-ciel",
    "la bourse",
    "un trou noir",
    "le réchauffement climatique",
    "un crédit immobilier",
    "l'ADN",
)
FR = (
    "Quelle est la capitale {country} ?",
    "c'est quoi la capitale {country}",
    "Qui a écrit {book} ?",
    "Qui a peint {painting} ?",
    "Explique-moi simplement {topic}.",
    "C'est quoi {topic} ?",
    "Peux-tu m'expliquer {topic} en une phrase ?",
    "Explique {topic} à un enfant de {age} ans.",
    "Quelle monnaie utilise-t-on {in_country} ?",
    "Quelle langue parle-t-on {in_country} ?",
    "Pourquoi les feuilles changent-elles de couleur en automne ?",
    "En quelle année a eu lieu la Révolution française ?",
    "Que veut dire l'expression « {idiom} » ?",
    "Quelle est la différence entre la météo et le climat ?",
    "Combien de joueurs y a-t-il dans une équipe de rugby ?",
    "Où se trouve {landmark} ?",
    "Qui a inventé le téléphone ?",
    "Quel est le plus long fleuve {in_country} ?",
    "Quand a été construit {landmark} ?",
    "Pourquoi {why_fr} ?",
    "C'est quoi la différence entre {pair_fr} ?",
    "Que signifie le sigle {abbr} ?",
    "Explique-moi en deux phrases {topic}.",
    "Quelle est la fête nationale {country} ?",
)
FR_WHY = (
    "le ciel devient rouge le soir",
    "la mer est salée",
    "les chats ronronnent",
    "on baille",
    "le pain rassit",
)
FR_PAIRS = (
    "un lièvre et un lapin",
    "la météo et le climat",
    "un virus et une bactérie",
    "un lac et un étang",
)
# Titles and places as French, Italian and Portuguese speakers name them.
BOOKS_INTL = (
    "Frankenstein",
    "Dracula",
    "Moby Dick",
    "Hamlet",
    "Madame Bovary",
    "Les Misérables",
    "Faust",
    "Pinocchio",
    "Don Quichotte",
    "Le Petit Prince",
    "Harry Potter",
    "Le Comte de Monte-Cristo",
    "Candide",
    "Macbeth",
)
PAINTINGS_INTL = ("Guernica", "La Joconde", "Les Tournesols", "Le Cri", "Les Nymphéas", "La Ronde de nuit")
LANDMARKS_INTL = (
    "Machu Picchu",
    "Petra",
    "Angkor Wat",
    "Uluru",
    "Stonehenge",
    "Chichén Itzá",
    "l'Alhambra",
    "le Colisée",
    "la Sagrada Família",
    "le Taj Mahal",
    "la tour Eiffel",
    "le mont Kilimandjaro",
)
IT_LANDMARKS = (
    "Machu Picchu",
    "Petra",
    "Angkor Wat",
    "Uluru",
    "Stonehenge",
    "Chichén Itzá",
    "l'Alhambra",
    "la Sagrada Família",
    "il Taj Mahal",
    "la Torre Eiffel",
    "il Partenone",
    "la Grande Muraglia",
)
IT_BOOKS = (
    "I promessi sposi",
    "Pinocchio",
    "Il nome della rosa",
    "Il Gattopardo",
    "Frankenstein",
    "Dracula",
    "Moby Dick",
    "Amleto",
    "Il piccolo principe",
    "Don Chisciotte",
)
IT_PAINTINGS = ("la Gioconda", "Guernica", "la Nascita di Venere", "l'Urlo", "i Girasoli", "la Primavera")
PT_LANDMARKS = (
    "Machu Picchu",
    "Petra",
    "Angkor Wat",
    "Uluru",
    "Stonehenge",
    "Chichén Itzá",
    "o Cristo Redentor",
    "a Torre de Belém",
    "o Taj Mahal",
    "a Torre Eiffel",
    "o Partenon",
    "a Grande Muralha",
)
PT_BOOKS = (
    "Os Lusíadas",
    "Dom Casmurro",
    "Ensaio sobre a Cegueira",
    "O Alquimista",
    "Frankenstein",
    "Drácula",
    "Moby Dick",
    "Hamlet",
    "O Pequeno Príncipe",
    "Dom Quixote",
)
PT_PAINTINGS = ("a Mona Lisa", "Guernica", "Abaporu", "O Grito", "Os Girassóis", "O Nascimento de Vénus")
FR_IN = ("au Canada", "au Pérou", "en Norvège", "au Kenya", "en Australie", "au Portugal", "en Islande")
FR_IDIOMS = ("poser un lapin", "avoir le cafard", "coûter les yeux de la tête", "tomber dans les pommes")


def _factual_fr(rng: random.Random) -> Messages:
    text = pick(rng, FR).format(
        country=pick(rng, FR_COUNTRIES),
        book=pick(rng, BOOKS_INTL),
        painting=pick(rng, PAINTINGS_INTL),
        topic=pick(rng, FR_TOPICS),
        age=rng.randint(5, 12),
        in_country=pick(rng, FR_IN),
        idiom=pick(rng, FR_IDIOMS),
        landmark=pick(rng, LANDMARKS_INTL),
        why_fr=pick(rng, FR_WHY),
        pair_fr=pick(rng, FR_PAIRS),
        abbr=pick(rng, ("ONU", "SNCF", "UE", "OMS", "TVA")),
    )
    return chat(rng, noisy(rng, aside(rng, "fr") + text, "fr"), lang="fr")


IT = (
    "Qual è la capitale {it_country}?",
    "Chi ha scritto {book}?",
    "Spiegami in modo semplice {it_topic}.",
    "Cos'è {it_topic}?",
    "In che anno è caduto il muro di Berlino?",
    "Chi ha dipinto {painting}?",
    "Perché il mare è salato?",
    "Che lingua si parla {it_in}?",
    "Dove si trova {landmark}?",
    "Che differenza c'è tra il meteo e il clima?",
    "Quanti giocatori ci sono in una squadra di {it_sport}?",
    "Spiegami {it_topic} in una frase.",
    "Chi ha inventato il telefono?",
    "Quando è stato costruito {landmark}?",
)
IT_COUNTRIES = ("del Canada", "del Perù", "della Norvegia", "del Kenya", "dell'Australia", "del Portogallo")
IT_TOPICS = ("la fotosintesi", "l'inflazione", "un vaccino", "l'arcobaleno", "la borsa", "un buco nero")
IT_IN = ("in Svizzera", "in Brasile", "in Belgio", "in Austria", "in Messico")
PT = (
    "Qual é a capital {pt_country}?",
    "Quem escreveu {book}?",
    "Explica de forma simples {pt_topic}.",
    "O que é {pt_topic}?",
    "Quando foi descoberto o Brasil?",
    "Quem pintou {painting}?",
    "Por que as folhas mudam de cor no outono?",
    "Que moeda se usa {pt_in}?",
    "Onde fica {landmark}?",
    "Qual a diferença entre tempo e clima?",
    "Quantos jogadores tem um time de {pt_sport}?",
    "Explica {pt_topic} numa frase.",
    "Quem inventou o avião?",
    "Quando foi construído {landmark}?",
)
PT_COUNTRIES = ("do Canadá", "do Peru", "da Noruega", "do Quênia", "da Austrália", "da Hungria")
PT_TOPICS = (
    "a fotossíntese",
    "a inflação",
    "uma vacina",
    "o arco-íris",
    "a bolsa de valores",
    "um buraco negro",
)
PT_IN = ("na Suíça", "no Japão", "na Argentina", "em Angola", "no Chile")


def _factual_it_pt(rng: random.Random) -> Messages:
    if rng.random() < 0.5:
        text = pick(rng, IT).format(
            it_country=pick(rng, IT_COUNTRIES),
            book=pick(rng, IT_BOOKS),
            it_topic=pick(rng, IT_TOPICS),
            painting=pick(rng, IT_PAINTINGS),
            it_in=pick(rng, IT_IN),
            landmark=pick(rng, IT_LANDMARKS),
            it_sport=pick(rng, ("calcio", "pallavolo", "basket")),
        )
        return chat(rng, noisy(rng, aside(rng, "it") + text, "it"), lang="it")
    text = pick(rng, PT).format(
        pt_country=pick(rng, PT_COUNTRIES),
        book=pick(rng, PT_BOOKS),
        pt_topic=pick(rng, PT_TOPICS),
        painting=pick(rng, PT_PAINTINGS),
        pt_in=pick(rng, PT_IN),
        landmark=pick(rng, PT_LANDMARKS),
        pt_sport=pick(rng, ("futebol", "vôlei", "basquete")),
    )
    return chat(rng, noisy(rng, aside(rng, "pt") + text, "pt"), lang="pt")


SOURCES: tuple[Source, ...] = (
    make("gen:factual-trivia", "factual", _trivia),
    make("gen:factual-definitions", "factual", _definitions),
    make("gen:explain-simply", "factual", _explain),
    make("gen:factual-fr", "factual", _factual_fr),
    make("gen:factual-it-pt", "factual", _factual_it_pt),
)
