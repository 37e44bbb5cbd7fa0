"""Easy: everyday how-to and advice, paperwork, travel and money tips, recommendations, brainstorming and
simple plans. Many carry numbers, quantities, prices and dates on purpose: none needs any computing.

Over 600 lines on purpose: it is data (word lists, facts and sentence templates) with little logic;
splitting it would scatter one source's vocabulary over several files.
"""

from __future__ import annotations

import random

from gateway_training.generators.easy_common import aside, chat, make, noisy, pick
from gateway_training.sources import Messages, Source

DISHES = (
    "banana bread",
    "pancakes",
    "a vegetable lasagne",
    "chicken curry",
    "guacamole",
    "shakshuka",
    "a lemon drizzle cake",
    "mushroom risotto",
    "chocolate chip cookies",
    "a Greek salad",
    "minestrone",
    "overnight oats",
    "tomato soup",
    "beef stew",
    "pad thai",
    "hummus",
    "a quiche lorraine",
    "fajitas",
)
INGREDIENTS = (
    "500 g of minced beef",
    "2 onions",
    "a can of chickpeas",
    "3 eggs",
    "200 g of spinach",
    "half a pumpkin",
    "1 kg of potatoes",
    "a bag of rice",
    "4 chicken thighs",
    "a block of feta",
    "250 ml of cream",
    "two courgettes",
    "a tin of tomatoes",
    "some leftover ham",
    "a cup of lentils",
)
PLANTS = (
    "tomatoes",
    "basil",
    "a monstera",
    "tulip bulbs",
    "roses",
    "a lemon tree",
    "strawberries",
    "succulents",
    "lavender",
    "an orchid",
    "garlic",
    "a fiddle-leaf fig",
    "courgettes",
    "sunflowers",
)
STAINS = (
    "red wine",
    "coffee",
    "grass",
    "ink",
    "candle wax",
    "tomato sauce",
    "blood",
    "chewing gum",
    "grease",
)
FABRICS = ("a white shirt", "a carpet", "jeans", "a sofa cushion", "a wool jumper", "a tablecloth")
ROOMS = (
    "a tiny closet",
    "the kitchen drawers",
    "a messy garage",
    "a small studio flat",
    "my kids' toy corner",
    "the bathroom cabinet",
    "a home office",
    "the spare room",
    "the pantry",
)
HOWTO = (
    "Give me a recipe for {dish} with quantities, for {n} people.",
    "How do I make {dish}?",
    "I have {ing}, {ing2} and {ing3}. What can I cook tonight?",
    "Easy recipe for {dish}? Metric units please.",
    "How long should I boil an egg for a runny yolk?",
    "What can I use instead of butter in {dish}?",
    "Can you suggest a {mins}-minute stretching routine for after work?",
    "beginner running plan, 3 days a week?",
    "What's a good {mins}-minute workout for my lunch break, no equipment?",
    "How often should I water {plant}?",
    "When should I plant {plant}?",
    "How do I get rid of aphids on {plant} without chemicals?",
    "How do I remove a {stain} stain from {fabric}?",
    "Tips to organise {room}?",
    "How do I declutter {room}?",
    "How do I build a raised garden bed?",
    "how to build a morning routine that sticks",
    "How do I repot {plant}?",
    "Step by step, how do I unclog a bathroom sink?",
    "How do I hang a heavy mirror on a plaster wall?",
    "What's the best way to store {dish} for {n} days?",
    "How do I iron a shirt properly?",
    "Any tips for falling asleep faster?",
    "How do I stop my {pet} from scratching the sofa?",
    "What's a simple stretching routine for lower back pain after sitting 8 hours?",
    "How can I make my houseplants grow faster?",
    "How do I clean a cast iron pan?",
    "Give me 5 tips to keep my kitchen tidy.",
    "how do i wash a down jacket in the machine",
    "What should I put in a first aid kit for the car?",
    "How do I get my {age}-year-old to eat vegetables?",
)
PETS = ("cat", "dog", "kitten", "puppy", "rabbit")


def _howto(rng: random.Random) -> Messages:
    ing = rng.sample(INGREDIENTS, 3)
    text = pick(rng, HOWTO).format(
        dish=pick(rng, DISHES),
        n=rng.randint(2, 8),
        ing=ing[0],
        ing2=ing[1],
        ing3=ing[2],
        plant=pick(rng, PLANTS),
        stain=pick(rng, STAINS),
        fabric=pick(rng, FABRICS),
        room=pick(rng, ROOMS),
        mins=pick(rng, (10, 15, 25, 30, 40, 45)),
        pet=pick(rng, PETS),
        age=rng.randint(3, 10),
    )
    if rng.random() < 0.15:
        follow = pick(
            rng,
            (
                "thanks! can I freeze it?",
                "and without an oven?",
                "what if I only have 20 minutes?",
                "great, can you make it vegetarian?",
                "ok and for {n} people?",
            ),
        )
        return chat(
            rng, noisy(rng, follow.format(n=rng.randint(2, 12))), history=[(text, "Sure! Here's how: ...")]
        )
    return chat(rng, noisy(rng, aside(rng) + text))


PAPER_TASKS = (
    "open a bank account",
    "rent a flat",
    "get a library card",
    "register my car",
    "apply for a passport",
    "renew my driving licence",
    "register with a GP",
    "get a residence permit",
    "enrol my child in school",
    "apply for a marriage licence",
    "change my address with the tax office",
    "get a fishing licence",
    "register a newborn",
    "sign up for a gym",
    "open a mobile phone contract",
    "get a parking permit",
)
PLACES = (
    "the UK",
    "Germany",
    "France",
    "Spain",
    "Ireland",
    "the Netherlands",
    "Canada",
    "Australia",
    "Italy",
    "New York",
    "Ontario",
    "California",
    "Berlin",
    "Madrid",
    "Scotland",
    "Belgium",
    "Austria",
)
PAPER = (
    "What documents do I need to {task} in {place}?",
    "Which papers should I bring to {task}?",
    "What counts as proof of address when you {task}?",
    "Can a utility bill be proof of address to {task}?",
    "I just moved to {place}. How do I {task}?",
    "Steps to {task} in {place}?",
    "How long does it take to {task}?",
    "My passport expires in {month}. What do I need to renew it?",
    "Do I need an appointment to {task} in {place}?",
    "What's the process to {task} as a foreigner in {place}?",
    "checklist of documents to {task}",
    "Is a photo ID enough to {task}?",
    "What should I prepare before I go to {task}? Appointment is on {date}.",
    "The form to {task} asks for 'form of identity verification' - what do they mean?",
)
MONTHS = ("January", "March", "April", "June", "August", "September", "October", "December")
DATES = (
    "3 March",
    "12/05/2025",
    "June 14th",
    "2025-09-22",
    "Friday 7 November",
    "the 21st",
    "14.02.2026",
    "Tuesday the 9th",
    "April 30",
    "1/15/2025",
    "Monday 2 June",
    "the first of August",
)


def _paperwork(rng: random.Random) -> Messages:
    text = pick(rng, PAPER).format(
        task=pick(rng, PAPER_TASKS), place=pick(rng, PLACES), month=pick(rng, MONTHS), date=pick(rng, DATES)
    )
    return chat(rng, noisy(rng, aside(rng) + text))


DESTS = (
    "Lisbon",
    "Iceland",
    "Bali",
    "the Scottish Highlands",
    "Tokyo",
    "Marrakech",
    "New York",
    "Rome",
    "the Alps",
    "Costa Rica",
    "Prague",
    "a beach in Crete",
    "Vancouver",
    "a campsite in Wales",
    "Vienna",
)
MONEY = (
    "What should I pack for {d} days in {dest} in {month}?",
    "Packing list for a weekend in {dest}?",
    "How do I pack light for a {d}-day trip with only a carry-on?",
    "Is travel insurance worth it for a week in {dest}?",
    "Best way to avoid jet lag when flying to {dest}?",
    "What's a good daily budget for backpacking in {dest}?",
    "I earn {cur}{income} a month. Give me some tips to save more.",
    "How can I spend less on groceries?",
    "tips for sticking to a budget when you eat out a lot",
    "How do I start an emergency fund?",
    "What's the 50/30/20 budgeting rule?",
    "Should I pay off my credit card or save first? I owe {cur}{debt}.",
    "How do I avoid roaming charges in {dest}?",
    "Which apps help with budgeting?",
    "Any tips for saving money on a wedding?",
    "How do I get cheap flights to {dest}?",
    "What documents do I need to travel to {dest}?",
    "Do I need a plug adapter in {dest}?",
    "What's the tipping etiquette in {dest}?",
    "How do I keep my valuables safe while travelling in {dest}?",
    "I have {cur}{budget} for a {d}-day trip to {dest}, is that enough? any tips?",
    "How do I cut my electricity bill in winter?",
    "How much cash should I carry in {dest}, roughly?",
)


def _travel_money(rng: random.Random) -> Messages:
    text = pick(rng, MONEY).format(
        d=rng.randint(2, 21),
        dest=pick(rng, DESTS),
        month=pick(rng, MONTHS),
        cur=pick(rng, ("$", "£", "€")),
        income=pick(rng, ("1,800", "2,400", "3,100", "4,500", "2,050", "5,200")),
        debt=pick(rng, ("900", "1,200", "3,400", "650")),
        budget=pick(rng, ("600", "1,000", "1,500", "2,500", "400")),
    )
    return chat(rng, noisy(rng, aside(rng) + text))


GENRES = (
    "fantasy",
    "cosy mystery",
    "sci-fi",
    "historical fiction",
    "romance",
    "thriller",
    "non-fiction about space",
    "memoir",
    "horror",
    "graphic novel",
    "poetry",
    "self-help",
    "true crime",
    "classic",
)
MOVIE_MOODS = (
    "a rainy Sunday",
    "a family movie night with kids aged {age}",
    "a first date",
    "when I'm sad",
    "a Halloween party",
    "a long flight",
    "something like Studio Ghibli",
    "a feel-good evening",
)
RELATIONS = (
    "my dad",
    "my sister",
    "a coworker",
    "my grandmother",
    "my boyfriend",
    "my best friend",
    "my 10-year-old nephew",
    "my boss",
    "a new neighbour",
    "my teacher",
    "my wife",
    "a teenager",
)
HOBBIES = (
    "gardening",
    "cooking",
    "hiking",
    "video games",
    "yoga",
    "photography",
    "fishing",
    "knitting",
    "coffee",
    "board games",
    "reading",
    "running",
    "music",
    "woodworking",
    "travelling",
)
RECS = (
    "Can you recommend a {genre} book?",
    "books like {book}?",
    "What should I read next? I loved {book}.",
    "Recommend a movie for {mood}.",
    "Good series to binge this weekend?",
    "Gift ideas for {rel} who loves {hobby}?",
    "What can I get {rel} for their birthday, budget {cur}{price}?",
    "Podcast recommendations about {hobby}?",
    "Board games for {n} players that are easy to learn?",
    "Suggest some {genre} audiobooks for a road trip.",
    "What's a nice present for {rel} under {cur}{price}?",
    "Any good documentaries about {hobby}?",
    "I need a last-minute gift for {rel}, ideas?",
    "Recommend a few albums for a quiet evening.",
    "Which {genre} books are good for a teenager?",
    "What are some fun apps for learning {lang}?",
)
RBOOKS = (
    "The Hobbit",
    "Little Women",
    "Gone Girl",
    "The Martian",
    "Circe",
    "Educated",
    "Dune",
    "Rebecca",
    "The Secret History",
    "Project Hail Mary",
    "Where the Crawdads Sing",
    "The Night Circus",
)


def _recommendations(rng: random.Random) -> Messages:
    text = pick(rng, RECS).format(
        genre=pick(rng, GENRES),
        book=pick(rng, RBOOKS),
        mood=pick(rng, MOVIE_MOODS).format(age=rng.randint(4, 12)),
        rel=pick(rng, RELATIONS),
        hobby=pick(rng, HOBBIES),
        cur=pick(rng, ("$", "£", "€")),
        price=pick(rng, (20, 25, 30, 50, 75, 100, 15)),
        n=rng.randint(2, 8),
        lang=pick(rng, ("Spanish", "Japanese", "Italian", "German", "Korean")),
    )
    if rng.random() < 0.15:
        follow = pick(
            rng, ("thanks! something shorter?", "I've read that one, another?", "ooh nice, more like that")
        )
        return chat(rng, follow, history=[(text, "Here are a few ideas: ...")])
    return chat(rng, noisy(rng, aside(rng) + text))


BRAIN = (
    "Give me names for a {colour} {pet}.",
    "name ideas for my new {pet}?",
    "What should I name my {pet}? She's very {trait}.",
    "Ideas for a {age}th birthday party?",
    "Theme ideas for a {occasion}?",
    "What games can we play at a {occasion}?",
    "Brainstorm some slogans for a {business}.",
    "Name ideas for a {business}?",
    "Fun date night ideas at home?",
    "What do you think about pineapple on pizza?",
    "Cats or dogs, which is better?",
    "Is it rude to recline my seat on a plane?",
    "Team names for our office {sport} team?",
    "Ideas for a rainy day with kids aged {age2} and {age3}?",
    "What should I do this weekend in {city}?",
    "Give me 10 conversation starters for a {occasion}.",
    "Costume ideas for a {occasion}?",
    "What are some hobbies I could pick up this winter?",
    "Fun things to write in a guest book?",
    "Honest opinion: is {hobby} a boring hobby?",
    "Ideas for a themed dinner party for {n} friends?",
    "What would be a fun name for a wifi network?",
    "Ideas for a surprise for {rel} on our anniversary?",
    "What's a good name for a {colour} {pet} that loves {thing}?",
    "Suggest a theme for {rel}'s birthday party.",
    "Is it OK to wear white to a {occasion}?",
    "Which is nicer for a {occasion}: {opt1} or {opt2}?",
    "Ideas for a {business} logo?",
    "Help me brainstorm a name for my {hobby} blog.",
    "What are fun ways to celebrate {holiday} with {rel}?",
    "Give me some icebreaker questions for a {occasion}.",
    "Suggest a playlist theme for a {occasion}.",
    "What should our {sport} team wear for the tournament?",
)
RELS = ("my partner", "my mum", "my best friend", "my grandad", "my boss", "my son", "my sister")
THINGS = ("naps", "cheese", "the garden", "cardboard boxes", "music", "snow", "treats", "the beach")
OPTS = (
    ("pizza", "tacos"),
    ("a garden", "a rooftop"),
    ("candles", "fairy lights"),
    ("a DJ", "a playlist"),
    ("board games", "karaoke"),
    ("a cake", "cupcakes"),
    ("a brunch", "a dinner"),
)
HOLIDAYS = ("Christmas", "Easter", "Halloween", "Valentine's Day", "New Year", "Midsummer", "a long weekend")
COLOURS = ("black", "ginger", "white", "grey", "tabby", "spotted", "fluffy brown", "tiny")
TRAITS = ("lazy", "playful", "shy", "chatty", "clumsy", "elegant", "grumpy")
OCCASIONS = (
    "baby shower",
    "retirement party",
    "team offsite",
    "garden party",
    "housewarming",
    "Halloween party",
    "New Year's Eve dinner",
    "bachelorette party",
    "kids' sleepover",
    "book club night",
)
BUSINESSES = (
    "bakery",
    "dog-walking service",
    "cleaning company",
    "bike repair shop",
    "coffee truck",
    "yoga studio",
    "bookshop café",
    "plant shop",
    "food blog",
    "candle business",
)
CITIES = ("Bristol", "Lyon", "Madrid", "Chicago", "Melbourne", "Edinburgh", "Copenhagen", "Toronto", "Ghent")


def _brainstorm(rng: random.Random) -> Messages:
    opt = pick(rng, OPTS)
    text = (
        pick(rng, BRAIN)
        .format(
            colour=pick(rng, COLOURS),
            pet=pick(rng, (*PETS, "hamster", "goldfish", "parrot")),
            trait=pick(rng, TRAITS),
            age=rng.randint(5, 90),
            occasion=pick(rng, OCCASIONS),
            business=pick(rng, BUSINESSES),
            sport=pick(rng, ("football", "bowling", "quiz", "softball", "volleyball")),
            age2=rng.randint(3, 7),
            age3=rng.randint(8, 12),
            city=pick(rng, CITIES),
            hobby=pick(rng, HOBBIES),
            n=rng.randint(4, 12),
            rel=pick(rng, RELS),
            thing=pick(rng, THINGS),
            opt1=opt[0],
            opt2=opt[1],
            holiday=pick(rng, HOLIDAYS),
        )
        .replace("1th", "1st")
        .replace("2th", "2nd")
        .replace("3th", "3rd")
        .replace("11st", "11th")
    )
    return chat(rng, noisy(rng, aside(rng) + text))


PLANS = (
    "Put together a simple dinner menu for {date}, we'll be {n} people.",
    "Can you put together a menu for a dinner on {date}? {n} guests, one vegetarian.",
    "Make me a packing list for a trip to {dest} on {date}.",
    "Packing list please: {dest}, leaving {date}, {d} nights.",
    "Suggest a relaxed weekend itinerary in {city}.",
    "Plan a kid's birthday party on {date}, about {n} kids.",
    "Give me a simple weekly meal plan for a family of {n}.",
    "A simple morning routine starting at {time}?",
    "Plan a picnic for {date} in the park, what should I bring?",
    "Write a to-do list for moving house on {date}.",
    "Help me plan a cosy movie night for {date}.",
    "Plan a one-day visit to {city}, arriving around {time}.",
    "What should I cook for a Sunday lunch on {date}? {n} adults.",
    "Make a simple cleaning schedule for a small flat.",
    "Suggest a menu for a {occasion} on {date}.",
    "Plan a day at the beach with toddlers, we leave at {time}.",
    "Ideas for a schedule for my day off on {date}: I want to relax, read and see friends.",
    "Make this look like a nice daily schedule: wake up {time}, school run 8:15, work 9 to 5, dinner at 7.",
    "Write out a simple weekly timetable for my kids' summer holiday: mornings outside, afternoons reading.",
    "Tidy agenda for {date}, please: coffee at {time}, team photo at 11, lunch at 12:30, talks after.",
    "Suggest a calm evening routine before bed, I usually go to sleep around 11 pm.",
    "Plan a simple study routine for the week before my exam on {date}, nothing fancy.",
)


def _plans(rng: random.Random) -> Messages:
    text = pick(rng, PLANS).format(
        date=pick(rng, DATES),
        n=rng.randint(2, 14),
        dest=pick(rng, DESTS),
        d=rng.randint(2, 10),
        city=pick(rng, CITIES),
        time=pick(rng, ("6:30", "7:00", "7:45", "8 am", "9:15", "10:00", "noon")),
        occasion=pick(rng, OCCASIONS),
    )
    return chat(rng, noisy(rng, aside(rng) + text))


ES = (
    "Dame una receta de {es_dish} para {n} personas, con cantidades.",
    "¿Cómo quito una mancha de {es_stain}?",
    "¿Qué documentos necesito para {es_task} en España?",
    "¿Qué llevo en la maleta para {d} días en {dest}?",
    "Ideas de regalo para {es_rel} que le encanta {es_hobby}?",
    "¿Me recomiendas un libro de {es_genre}?",
    "Consejos para ahorrar en el supermercado?",
    "Planea un menú sencillo para la cena del {date}, somos {n}.",
    "¿Cada cuánto riego {es_plant}?",
    "Nombres para un gato {es_colour}?",
    "¿Cómo organizo un armario pequeño?",
    "Una rutina de ejercicios de {mins} minutos para hacer en casa, sin material.",
    "¿Qué hago este finde en {city}?",
    "¿Cómo puedo dormir mejor?",
    "Ideas para una fiesta de cumpleaños de {age} años?",
    "¿Qué pongo en la mochila para una excursión de un día a {city}?",
    "¿Cómo quito la cal del grifo?",
    "Consejos para organizar la cocina si es muy pequeña.",
    "¿Qué serie me recomiendas para ver con {es_rel}?",
    "¿Qué necesito para pedir cita en el médico de cabecera?",
    "¿Cómo preparo {es_dish} sin horno?",
    "Ideas para decorar el salón con poco dinero, unos {price} euros.",
    "¿Cómo ahorro si gano {salary} euros al mes?",
)
ES_DISH = ("tortilla de patatas", "gazpacho", "paella de verduras", "lentejas", "croquetas", "flan")
ES_STAIN = ("vino tinto", "café", "aceite", "tinta", "hierba")
ES_TASK = ("abrir una cuenta bancaria", "alquilar un piso", "sacar el NIE", "empadronarme", "renovar el DNI")
ES_REL = ("mi padre", "mi hermana", "una compañera de trabajo", "mi abuela", "mi novio")
ES_HOBBY = ("la jardinería", "cocinar", "el senderismo", "los videojuegos", "el yoga", "la fotografía")
ES_GENRE = ("fantasía", "misterio", "ciencia ficción", "novela histórica", "romance")
ES_PLANT = ("la albahaca", "un cactus", "las tomateras", "una orquídea", "un limonero")
ES_COLOUR = ("negro", "blanco", "naranja", "gris", "atigrado")


def _advice_es(rng: random.Random) -> Messages:
    text = pick(rng, ES).format(
        es_dish=pick(rng, ES_DISH),
        n=rng.randint(2, 10),
        es_stain=pick(rng, ES_STAIN),
        es_task=pick(rng, ES_TASK),
        d=rng.randint(2, 14),
        dest=pick(rng, DESTS),
        es_rel=pick(rng, ES_REL),
        es_hobby=pick(rng, ES_HOBBY),
        es_genre=pick(rng, ES_GENRE),
        date=pick(rng, ("12/10", "24 de diciembre", "sábado", "15/08/2025", "3 de mayo")),
        es_plant=pick(rng, ES_PLANT),
        es_colour=pick(rng, ES_COLOUR),
        mins=pick(rng, (15, 20, 30, 45)),
        city=pick(rng, ("Sevilla", "Bilbao", "Valencia", "Granada", "Buenos Aires", "Ciudad de México")),
        age=rng.randint(4, 60),
        price=pick(rng, (50, 100, 150, 200)),
        salary=pick(rng, ("1.200", "1.500", "2.100")),
    )
    return chat(rng, noisy(rng, aside(rng, "es") + text, "es"), lang="es")


DE = (
    "Gib mir ein Rezept für {de_dish} für {n} Personen, mit Mengenangaben.",
    "Wie bekomme ich einen {de_stain}fleck raus?",
    "Welche Unterlagen brauche ich, um {de_task}?",
    "Was brauche ich als Meldebescheinigung für die Bank?",
    "Packliste für {d} Tage in {dest} im {de_month}?",
    "Geschenkideen für {de_rel}, die gerne {de_hobby}?",
    "Kannst du mir einen Krimi empfehlen?",
    "Tipps, um beim Einkaufen Geld zu sparen?",
    "Wie oft gieße ich {de_plant}?",
    "Namensideen für einen {de_colour} Kater?",
    "Plane ein einfaches Abendessen für den {date}, wir sind {n}.",
    "Ein {mins}-Minuten-Workout für zu Hause ohne Geräte, bitte.",
    "Wie räume ich meinen Keller am besten auf?",
    "Was kann man am Wochenende in {city} machen?",
    "Wie schlafe ich schneller ein?",
    "Wie entkalke ich meinen Wasserkocher?",
    "Tipps für eine kleine Küche mit wenig Stauraum?",
    "Welche Serie passt für einen Abend mit {de_rel_dat}?",
    "Wie bereite ich {de_dish} ohne Backofen zu?",
    "Was gehört in einen Rucksack für eine Tageswanderung bei {city}?",
    "Wie spare ich Strom im Winter?",
    "Ideen für einen Kindergeburtstag mit {n} Kindern?",
    "Was brauche ich für einen Termin beim Bürgeramt am {date}?",
)
DE_DISH = ("Kartoffelsalat", "Apfelkuchen", "Linsensuppe", "Käsespätzle", "Gulasch", "Pfannkuchen")
DE_STAIN = ("Rotwein", "Kaffee", "Gras", "Tinten", "Fett")
DE_TASK = (
    "einen Reisepass zu beantragen",
    "mich in Berlin anzumelden",
    "ein Auto umzumelden",
    "eine Wohnung zu mieten",
    "ein Bankkonto zu eröffnen",
    "einen Bibliotheksausweis zu bekommen",
)
DE_REL_DAT = ("meiner Mutter", "meiner Kollegin", "meiner Oma", "meinem Bruder", "meinem Freund")
DE_REL = ("meine Mutter", "meine Kollegin", "meine Oma", "meine Schwester")
DE_HOBBY = ("gärtnert", "kocht", "wandert", "liest", "Yoga macht", "fotografiert")
DE_PLANT = ("Basilikum", "eine Monstera", "Tomaten", "eine Orchidee", "Kakteen")
DE_COLOUR = ("schwarzen", "roten", "grauen", "weißen", "getigerten")
DE_MONTH = ("Januar", "März", "Juli", "Oktober", "Dezember", "Mai")


def _advice_de(rng: random.Random) -> Messages:
    text = pick(rng, DE).format(
        de_dish=pick(rng, DE_DISH),
        n=rng.randint(2, 10),
        de_stain=pick(rng, DE_STAIN),
        de_task=pick(rng, DE_TASK),
        d=rng.randint(2, 14),
        dest=pick(rng, DESTS),
        de_month=pick(rng, DE_MONTH),
        de_rel=pick(rng, DE_REL),
        de_rel_dat=pick(rng, DE_REL_DAT),
        de_hobby=pick(rng, DE_HOBBY),
        de_plant=pick(rng, DE_PLANT),
        de_colour=pick(rng, DE_COLOUR),
        date=pick(rng, ("24.12.", "Samstag", "15.08.2025", "3. Mai", "nächsten Freitag")),
        mins=pick(rng, (15, 20, 30, 45)),
        city=pick(rng, ("Hamburg", "Leipzig", "Wien", "Zürich", "Köln", "Freiburg")),
    )
    return chat(rng, noisy(rng, aside(rng, "de") + text, "de"), lang="de")


SOURCES: tuple[Source, ...] = (
    make("gen:advice-howto", "advice", _howto),
    make("gen:advice-paperwork", "advice", _paperwork),
    make("gen:advice-travel-money", "advice", _travel_money),
    make("gen:recommendations", "advice", _recommendations),
    make("gen:brainstorm-opinions", "advice", _brainstorm),
    make("gen:simple-plans", "advice", _plans),
    make("gen:advice-es", "advice", _advice_es),
    make("gen:advice-de", "advice", _advice_de),
)
