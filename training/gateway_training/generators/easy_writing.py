"""Easy: light writing. Occasion messages and posts, short creative pieces for children, everyday emails,
and French variants. Riddles and jokes for kids are writing, not puzzles the user wants solved.
"""

from __future__ import annotations

import random

from gateway_training.generators.easy_common import aside, chat, make, noisy, pick
from gateway_training.sources import Messages, Source

NAMES = (
    "Emma",
    "Liam",
    "Sofia",
    "Noah",
    "Aisha",
    "Mateo",
    "Hannah",
    "Kenji",
    "Chloé",
    "Omar",
    "Grace",
    "Lukas",
    "Priya",
    "Tom",
    "Zara",
    "Ines",
    "Daniel",
    "Maya",
    "Jonas",
    "Fatima",
    "Ben",
    "Lea",
    "Sam",
)
RELATIONS = (
    "my mum",
    "my best friend",
    "my colleague",
    "my grandpa",
    "my sister",
    "my boss",
    "my neighbour",
    "my son",
    "my daughter",
    "my husband",
    "my teacher",
    "my team lead",
    "my cousin",
    "my roommate",
)
PRODUCTS = (
    ("a bamboo cutting board", "24.99"),
    ("noise-cancelling headphones", "149"),
    ("a handmade soy candle", "18"),
    ("a waterproof hiking jacket", "89.90"),
    ("a ceramic coffee mug", "12.50"),
    ("an organic face cream", "34"),
    ("a kids' wooden puzzle", "21"),
    ("a reusable water bottle", "15.95"),
    ("a linen tote bag", "9.99"),
    ("a cast iron skillet", "45"),
    ("a yoga mat", "29"),
    ("a smart desk lamp", "59"),
    ("a dog raincoat", "27.50"),
)
TOPICS_TWEET = (
    "our bakery's new sourdough",
    "the first day of spring",
    "Monday mornings",
    "our team winning the cup",
    "a new blog post about houseplants",
    "the farmers' market this Saturday",
    "my first marathon",
    "our shop's summer sale (20% off)",
    "the book club meeting on Thursday",
    "coffee",
)
OCCASION = (
    "Write a birthday message for {rel} who is turning {age}.",
    "short happy birthday text for {name}, she loves {thing}",
    "Write a tweet about {tweet}.",
    "Can you write an Instagram caption for a photo of {scene}?",
    "Write a product description for {product}, price {cur}{price}.",
    "I need a 50-word description of {product} for my Etsy shop.",
    "Write a LinkedIn post announcing that I started a new job at {company}.",
    "A congratulations card for {name}'s wedding, please.",
    "Write a thank-you card for {rel} for the lovely gift.",
    "Write a get-well-soon message for {name}.",
    "Farewell message for {name}, who is leaving the team after {years} years.",
    "Write a toast for {rel}'s {age}th birthday, about a minute long.",
    "Can you write a short bio for my Instagram? I'm a {job} who loves {thing}.",
    "Write a retirement card message for {name}.",
    "Write a short welcome post for new members of our {club}.",
    "a cute message to put in my kid's lunchbox",
    "Christmas card message for my clients, warm but professional.",
    "Write a slogan for {product}.",
)
SCENES = (
    "a sunset over the sea",
    "my dog in the snow",
    "pancakes on a Sunday",
    "a mountain hike",
    "our new kitchen",
)
COMPANIES = (
    "a small design studio",
    "the city library",
    "a hospital in Leeds",
    "a bike shop",
    "an insurance firm",
)
JOBS = ("nurse", "baker", "teacher", "photographer", "student", "dog walker", "florist", "barista")
CLUBS = ("book club", "running club", "choir", "chess club", "gardening group", "board game night")
THINGS = ("cats", "hiking", "cooking", "gardening", "Taylor Swift", "football", "travelling", "chocolate")


def _occasion(rng: random.Random) -> Messages:
    product, price = pick(rng, PRODUCTS)
    text = (
        pick(rng, OCCASION)
        .format(
            rel=pick(rng, RELATIONS),
            age=rng.randint(4, 90),
            name=pick(rng, NAMES),
            thing=pick(rng, THINGS),
            tweet=pick(rng, TOPICS_TWEET),
            scene=pick(rng, SCENES),
            product=product,
            price=price,
            cur=pick(rng, ("$", "£", "€")),
            company=pick(rng, COMPANIES),
            years=rng.randint(2, 30),
            job=pick(rng, JOBS),
            club=pick(rng, CLUBS),
        )
        .replace("1th", "1st")
        .replace("2th", "2nd")
        .replace("3th", "3rd")
        .replace("11st", "11th")
        .replace("12nd", "12th")
        .replace("13rd", "13th")
    )
    if rng.random() < 0.18:
        follow = pick(
            rng,
            (
                "make it shorter",
                "funnier please!",
                "can you add an emoji or two?",
                "more formal",
                "perfect, thanks!",
                "now in Spanish",
                "less cheesy pls",
            ),
        )
        return chat(rng, follow, history=[(text, "Here's a draft: ...")])
    return chat(rng, noisy(rng, text))


ANIMALS = (
    "a shy hedgehog",
    "a brave little snail",
    "a dragon who is afraid of the dark",
    "a penguin who wants to fly",
    "a lost teddy bear",
    "a clumsy giraffe",
    "a friendly robot",
    "a sleepy owl",
    "a kitten on its first snow day",
    "a tortoise who wins a race",
    "a cloud that wants to be a rainbow",
    "two mice sharing a cheese",
)
SUBJECTS = (
    "autumn leaves",
    "the morning commute",
    "my cat",
    "the ocean",
    "coffee",
    "the first snow",
    "a rainy Monday",
    "cherry blossoms",
    "friendship",
    "the moon",
    "a garden",
    "homework",
    "grandma's kitchen",
)
CREATIVE = (
    "Write a haiku about {subject}.",
    "haiku on {subject} pls",
    "Write a short bedtime story for a {age}-year-old about {animal}.",
    "Tell me a riddle for kids.",
    "Give me a riddle my {age}-year-old would get.",
    "A few riddles for a children's party?",
    "Tell me a joke for a {age}-year-old.",
    "Knock-knock jokes for kids please!",
    "Write a limerick about {subject}.",
    "Write a short poem about {subject} for Mother's Day.",
    "a four-line poem about {subject}",
    "Make up a short story about {animal}, 150 words, for children.",
    "Write a rhyming poem about {animal}.",
    "Write a short fairy tale where {animal} saves the day.",
    "Can you write a song for my kid's birthday? Her name is {name}.",
    "Give me a tongue twister for a {age}-year-old.",
    "Write a silly story about {animal} for my class of {age}-year-olds.",
    "Write a few lines of a poem for {name}'s graduation card.",
    "Write an acrostic poem with the name {name}.",
)


def _creative(rng: random.Random) -> Messages:
    text = pick(rng, CREATIVE).format(
        subject=pick(rng, SUBJECTS),
        age=pick(rng, (3, 4, 5, 6, 7, 9, 10, 12)),
        animal=pick(rng, ANIMALS),
        name=pick(rng, NAMES),
    )
    if rng.random() < 0.15:
        follow = pick(
            rng, ("haha another one!", "that was cute, one more?", "make it rhyme", "shorter please")
        )
        return chat(rng, follow, history=[(text, "Here you go: ...")])
    return chat(rng, noisy(rng, text))


EMAILS = (
    "Write an email to my manager asking for a day off on {date}.",
    "email asking for {date} off, I have a dentist appointment",
    "Draft a polite email to {name} reminding them that invoice #{inv} for {cur}{amount} is due on {date}.",
    "Write a short thank-you note to my neighbour {name} for watering my plants.",
    "Write an out-of-office message, I'm away until {date}.",
    "Write an email apologising for missing yesterday's meeting.",
    "Can you write an RSVP to {name}'s wedding? We're coming, 2 people.",
    "Write a message to my landlord saying the heating is broken since {date}.",
    "Write a short email to my kid's teacher, he'll be absent on {date}.",
    "Draft an email to a client to reschedule our call from {date} to the following week.",
    "Write a polite complaint to a restaurant about a late delivery (order #{inv}).",
    "A short email to HR asking about my remaining holiday days.",
    "Write an email inviting the team to a farewell lunch for {name} on {date} at {time}.",
    "Help me write a message to cancel my gym membership.",
    "Write a cover letter opening paragraph for a {job} job.",
    "write a text to {name} saying I'll be 10 minutes late",
    "Email to the school asking for a meeting with {name}'s teacher.",
)


def _emails(rng: random.Random) -> Messages:
    text = pick(rng, EMAILS).format(
        date=pick(
            rng, ("Friday", "3 March", "12/05/2025", "June 14th", "next Monday", "2025-09-22", "the 21st")
        ),
        name=pick(rng, NAMES),
        inv=rng.randint(1000, 99999),
        cur=pick(rng, ("$", "£", "€")),
        amount=pick(rng, ("1,250.00", "480", "89.99", "3,400", "215.50")),
        time=pick(rng, ("12:30", "1 pm", "noon", "12:00")),
        job=pick(rng, JOBS),
    )
    return chat(rng, noisy(rng, aside(rng, rate=0.2, writing=True) + text), system_rate=0.25)


FR = (
    "Écris un message d'anniversaire pour {fr_rel} qui a {age} ans.",
    "Écris un haïku sur {fr_subject}.",
    "Raconte une petite histoire pour un enfant de {kid} ans sur {fr_animal}.",
    "Donne-moi une devinette pour enfants.",
    "Écris un mail à mon chef pour demander un jour de congé le {date}.",
    "Écris un tweet sur {fr_subject}.",
    "Rédige une description de produit pour {fr_product}, prix {price} €.",
    "Écris un petit poème pour la fête des mères.",
    "Écris un mot de remerciement pour {fr_rel}.",
    "Une blague pour un enfant de {kid} ans ?",
    "Écris un message de départ pour {name} qui quitte l'équipe.",
    "Écris une carte de vœux pour mes clients.",
    "Écris une légende Instagram pour une photo de {fr_subject}.",
    "Écris un petit mot pour {name}, qui a eu son bac.",
    "Rédige un mail pour décaler notre rendez-vous du {date}.",
    "Écris une histoire drôle sur {fr_animal} pour la classe.",
    "Écris un message d'excuse à {fr_rel} : je serai en retard de {mins} minutes.",
    "Un slogan pour {fr_product} ?",
    "Écris une comptine sur {fr_subject} pour des enfants de {kid} ans.",
    "Écris un SMS pour inviter {name} à dîner samedi.",
)
FR_REL = ("ma mère", "mon meilleur ami", "ma collègue", "mon grand-père", "ma sœur", "ma voisine")
FR_SUBJECT = ("l'automne", "la mer", "mon chat", "le café", "la pluie", "les vacances", "la lune")
FR_ANIMAL = ("un hérisson timide", "un petit dragon", "une tortue courageuse", "un pingouin qui veut voler")
FR_PRODUCT = ("une bougie parfumée", "un sac en lin", "une tasse en céramique", "un savon artisanal")


def _writing_fr(rng: random.Random) -> Messages:
    text = pick(rng, FR).format(
        fr_rel=pick(rng, FR_REL),
        age=rng.randint(4, 80),
        kid=rng.randint(3, 10),
        fr_subject=pick(rng, FR_SUBJECT),
        fr_animal=pick(rng, FR_ANIMAL),
        date=pick(rng, ("vendredi", "12 mai", "3 mars", "15/07/2025")),
        fr_product=pick(rng, FR_PRODUCT),
        price=pick(rng, ("12", "19,90", "35", "8,50")),
        name=pick(rng, NAMES),
        mins=pick(rng, (10, 15, 20, 30)),
    )
    return chat(rng, noisy(rng, aside(rng, "fr", rate=0.2, writing=True) + text, "fr"), lang="fr")


SOURCES: tuple[Source, ...] = (
    make("gen:writing-occasions", "writing", _occasion),
    make("gen:writing-creative-kids", "writing", _creative),
    make("gen:writing-emails", "writing", _emails),
    make("gen:writing-fr", "writing", _writing_fr),
)
