"""Easy: small talk, greetings and their follow-ups, and role-play chat as Telegram/Discord bots see it."""

from __future__ import annotations

import random

from gateway_training.generators.easy_common import chat, make, noisy, pick
from gateway_training.sources import Messages, Source

CITIES = (
    "Leeds",
    "Lyon",
    "Porto",
    "Austin",
    "Osaka",
    "Graz",
    "Cork",
    "Bologna",
    "Tampere",
    "Perth",
    "Denver",
    "Utrecht",
    "Valencia",
    "Krakow",
    "Quebec City",
    "Brighton",
    "Malmo",
    "Seville",
    "Nantes",
    "Halifax",
)
PETS = ("cat", "dog", "hamster", "parrot", "rabbit", "puppy", "kitten", "guinea pig", "tortoise", "goldfish")
WEATHER = ("raining again", "super sunny", "freezing", "so windy", "foggy", "snowing", "really humid", "grey")
DONE = (
    "my thesis",
    "the marathon",
    "painting the kitchen",
    "my first pottery class",
    "a 1000-piece puzzle",
    "my driving test",
    "the Harry Potter books",
    "moving house",
    "my tax return",
    "a week without sugar",
    "knitting a scarf",
    "the night shift",
    "my first 5k run",
    "assembling the new wardrobe",
)
HOLIDAYS = (
    "Christmas",
    "New Year",
    "Easter",
    "Halloween",
    "Thanksgiving",
    "Diwali",
    "Eid",
    "Friday",
    "weekend",
)
OPENERS = (
    "hi",
    "hey there!",
    "good morning :)",
    "hello, how's it going?",
    "yo",
    "How are you today?",
    "what's up?",
    "I'm bored, talk to me",
    "Tell me something fun.",
    "Do you have a favourite colour?",
    "What do you like to do for fun?",
    "I just got back from {city}, it was lovely.",
    "My {pet} just did the funniest thing",
    "It's {weather} here in {city} today.",
    "I finally finished {done}!",
    "guess what, I got the job!!",
    "Happy {holiday}!",
    "good night, talk tomorrow",
    "I'm having a rough day.",
    "can you cheer me up a little?",
    "Do you ever get tired of chatting?",
    "What should I call you?",
    "is it weird that I talk to a bot",
    "drinking my {n}th coffee of the day lol",
    "Good evening! Long day.",
    "hiii 👋",
    "Morning! Any plans for today?",
    "It's my birthday today 🎂",
    "I'm {age} today, feeling old haha",
    "Just wanted to say hi.",
    "I adopted a {pet} yesterday!",
    "Bonjour! Do you speak English too?",
    "what's your favourite season?",
    "I can't sleep. Chat with me for a bit?",
    "ugh mondays",
    "Do you like music? I've been listening to jazz all day.",
    "I'm back from my holiday in {city}!",
    "Rate my day: woke up late, missed the bus, but found $20 on the street.",
    "What would you eat for breakfast if you could eat?",
    "Say something nice please",
    "Tell me a fun fact about {pet}s.",
    "Are you a morning person or a night owl?",
)
ASSISTANT = (
    "Hi! I'm doing well, thanks for asking. How about you?",
    "That sounds lovely! How was it?",
    "Oh no, I'm sorry to hear that. Want to talk about it?",
    "Congratulations! That's a big achievement. 🎉",
    "Here's a fun one: octopuses have three hearts.",
    "Haha, that's adorable. What's their name?",
    "Good morning! I'm ready whenever you are.",
    "I'd pick autumn: cosy jumpers and warm drinks.",
    "You can call me whatever you like!",
)
FOLLOW_UPS = (
    "thanks!",
    "haha nice",
    "lol",
    "ok cool",
    "that's sweet",
    "tell me another one",
    "you're funny",
    "ok bye!",
    "nice, and how about you?",
    "good to know, thanks a lot",
    "awesome 👍",
    "hmm ok",
    "one more?",
    "aww thank you",
    "hahaha",
    "Thanks, you made my day.",
    "cool cool",
    "really? wow",
    "Same here!",
    "see you later",
    "ok that's enough for today, night!",
    "love that",
    "wait, really?",
    "😂😂",
    "Her name is {name}.",
    "It was great, the food in {city} was amazing.",
    "not bad, a bit tired",
)
NAMES = ("Luna", "Milo", "Biscuit", "Pepper", "Ziggy", "Nala", "Oscar", "Mochi", "Olive", "Rocky", "Poppy")


def _fill(rng: random.Random, text: str) -> str:
    return (
        text.format(
            city=pick(rng, CITIES),
            pet=pick(rng, PETS),
            weather=pick(rng, WEATHER),
            done=pick(rng, DONE),
            holiday=pick(rng, HOLIDAYS),
            n=pick(rng, ("3r", "4t", "5t", "6t")),
            age=rng.randint(19, 71),
            name=pick(rng, NAMES),
        )
        .replace("3rth", "3rd")
        .replace("4tth", "4th")
    )


def _smalltalk(rng: random.Random) -> Messages:
    if rng.random() < 0.4:
        turns = rng.randint(1, 2)
        history = [(_fill(rng, pick(rng, OPENERS)), pick(rng, ASSISTANT)) for _ in range(turns)]
        return chat(rng, noisy(rng, _fill(rng, pick(rng, FOLLOW_UPS))), history=history)
    return chat(rng, noisy(rng, _fill(rng, pick(rng, OPENERS))))


BOTS = (
    ("Sunny", "the Telegram group of a hiking club"),
    ("Pixel", "a gaming Discord server"),
    ("Bao", "a dumpling restaurant's Telegram channel"),
    ("Fern", "a plant lovers' chat"),
    ("Captain Rumbeard", "a pirate-themed tabletop group"),
    ("Nana Rose", "a cosy knitting community"),
    ("Barista Bo", "a coffee shop's ordering chat"),
    ("Sir Reginald", "a medieval role-play server"),
    ("Zoe", "a language exchange group"),
    ("Dr. Whiskers", "a cat rescue charity's Telegram bot"),
)
PERSONA = (
    "You are {bot}, a friendly bot for {place}. Keep replies short, warm and use an emoji now and then.",
    "You are {bot}. You chat with members of {place}. Stay in character and keep it light.",
    "Role: {bot}, mascot of {place}. Be playful, never rude, two or three sentences per reply.",
    "You're {bot}, the assistant living in {place}. Answer casually.",
)
RP_USER = (
    "/start",
    "/help",
    "hi {bot}! what can you do?",
    "Good morning {bot} ☀️",
    "{bot}, tell us a joke",
    "Ahoy! Where are we sailing today?",
    "I'd like a large oat latte please",
    "what's the vibe today {bot}?",
    "greet the new member, her name is {name}",
    "Pretend you're a grumpy innkeeper and welcome me in.",
    "let's play: you're a shopkeeper and I'm buying a sword",
    "As my personal cheerleader, hype me up for my exam.",
    "{bot} do you like rainy days?",
    "say something in pirate speak",
    "who's your best friend here?",
    "ok {bot}, what's the plant of the day?",
    "I'm new here, how does this group work?",
    "gm everyone",
    "{bot}, wish {name} a happy birthday!",
    "Can you talk like a cowboy for the rest of the chat?",
    "What's on the menu today?",
    "can u recommend a trail for a lazy sunday?",
)
RP_REPLY = (
    "Hello there! 👋 I'm here to chat, tell jokes and share a tip of the day.",
    "Arr, fair winds! Today we sail for the Isle of Snacks! 🏴‍☠️",
    "Welcome, traveller! Sit by the fire, the stew is almost ready.",
    "Coming right up! One large oat latte ☕",
    "Welcome aboard! Glad to have you here 🌿",
)
RP_FOLLOW = (
    "haha love it",
    "another one!",
    "thanks {bot}",
    "ok now in a pirate voice",
    "make it shorter",
    "what else can you do?",
    "lol you're the best",
    "and a croissant too please",
    "can you say it in Spanish?",
    "great, see you tomorrow",
    "now welcome {name} too",
    "ok, stay in character!",
    "hmm not funny, try again",
)


def _roleplay(rng: random.Random) -> Messages:
    bot, place = pick(rng, BOTS)
    system = pick(rng, PERSONA).format(bot=bot, place=place)

    def fill(text: str) -> str:
        return text.format(bot=bot, name=pick(rng, NAMES))

    if rng.random() < 0.35:
        history = [(fill(pick(rng, RP_USER)), pick(rng, RP_REPLY))]
        return chat(rng, noisy(rng, fill(pick(rng, RP_FOLLOW))), system=system, history=history)
    if rng.random() < 0.15:  # a role-play set up in the user turn, without a persona prompt
        return chat(rng, noisy(rng, fill(pick(rng, RP_USER))), system_rate=0.0)
    return chat(rng, noisy(rng, fill(pick(rng, RP_USER))), system=system)


DE_OPENERS = (
    "Hallo!",
    "Guten Morgen :)",
    "Na, wie geht's?",
    "Mir ist langweilig, erzähl mir was.",
    "Servus!",
    "Ich hab heute endlich {done_de} geschafft!",
    "Hier in {city} regnet es schon wieder.",
    "Gute Nacht!",
    "Was machst du so?",
    "Hast du eine Lieblingsfarbe?",
    "Ich hatte einen echt anstrengenden Tag.",
    "Erzähl mir einen Witz.",
    "Ich habe gestern eine Katze adoptiert!",
    "Schönes Wochenende!",
    "Heute ist mein Geburtstag 🎉",
    "Kannst du mich ein bisschen aufmuntern?",
    "Moin moin",
    "Wie soll ich dich nennen?",
    "Frohe Weihnachten!",
    "Was ist deine Lieblingsjahreszeit?",
    "Ich bin gerade aus {city} zurück, war super!",
    "Mein {tier_de} hat heute was total Lustiges gemacht.",
    "Heute werde ich {age}, ich fühl mich alt haha",
    "Ich trinke gerade meinen {n}. Kaffee heute.",
    "Rate mal, ich habe den Job bekommen!",
    "Schönen Feierabend!",
    "Erzähl mir einen lustigen Fakt über {tier_de}e.",
)
DE_DONE = ("die Steuererklärung", "meinen ersten Halbmarathon", "den Umzug", "das Bücherregal", "die Prüfung")
DE_REPLY = (
    "Hallo! Mir geht's gut, danke. Und dir?",
    "Glückwunsch! Das ist toll. 🎉",
    "Oh, das tut mir leid.",
)
DE_FOLLOW = (
    "danke!",
    "haha super",
    "lol",
    "ok cool",
    "noch einen bitte",
    "bis später!",
    "Gut zu wissen, danke.",
)


def _smalltalk_de(rng: random.Random) -> Messages:
    def fill(text: str) -> str:
        return text.format(
            city=pick(rng, CITIES),
            done_de=pick(rng, DE_DONE),
            age=rng.randint(19, 71),
            n=rng.randint(3, 6),
            tier_de=pick(rng, ("Hund", "Kater", "Hamster", "Papagei")),
        )

    if rng.random() < 0.35:
        history = [(fill(pick(rng, DE_OPENERS)), pick(rng, DE_REPLY))]
        return chat(rng, noisy(rng, pick(rng, DE_FOLLOW), "de"), lang="de", history=history)
    return chat(rng, noisy(rng, fill(pick(rng, DE_OPENERS)), "de"), lang="de")


ES_OPENERS = (
    "¡Hola!",
    "Buenos días :)",
    "¿Qué tal?",
    "Estoy aburrido, háblame un rato.",
    "¡Buenas noches!",
    "Por fin terminé {done_es}!",
    "Aquí en {city} hace muchísimo calor hoy.",
    "¿Qué haces?",
    "¿Tienes un color favorito?",
    "Hoy ha sido un día horrible.",
    "Cuéntame un chiste.",
    "¡Feliz Navidad!",
    "Hoy es mi cumpleaños 🎂",
    "¿Me animas un poco?",
    "¿Cómo te llamo?",
    "Acabo de adoptar un perrito.",
    "¿Eres más de mañanas o de noches?",
    "¡Feliz fin de semana!",
    "jajaja hola de nuevo",
    "Acabo de volver de {city}, ¡qué maravilla!",
    "Mi {animal} ha hecho algo graciosísimo hoy.",
    "Hoy cumplo {age}, me siento mayor jaja",
    "Voy por mi café número {n} de hoy.",
    "¡Adivina! Me han dado el trabajo.",
    "Cuéntame un dato curioso sobre los {animal}s.",
)
ES_DONE = ("la mudanza", "mi primera maratón", "el trabajo de fin de grado", "el puzle de mil piezas")
ES_REPLY = ("¡Hola! Muy bien, gracias. ¿Y tú?", "¡Enhorabuena! 🎉", "Vaya, lo siento mucho.")
ES_FOLLOW = ("¡gracias!", "jaja qué bueno", "vale", "otro, porfa", "¡hasta luego!", "qué bonito", "ok genial")


def _smalltalk_es(rng: random.Random) -> Messages:
    def fill(text: str) -> str:
        return text.format(
            city=pick(rng, CITIES),
            done_es=pick(rng, ES_DONE),
            age=rng.randint(19, 71),
            n=rng.randint(3, 6),
            animal=pick(rng, ("gato", "perro", "loro", "conejo")),
        )

    if rng.random() < 0.35:
        history = [(fill(pick(rng, ES_OPENERS)), pick(rng, ES_REPLY))]
        return chat(rng, noisy(rng, pick(rng, ES_FOLLOW), "es"), lang="es", history=history)
    return chat(rng, noisy(rng, fill(pick(rng, ES_OPENERS)), "es"), lang="es")


SOURCES: tuple[Source, ...] = (
    make("gen:smalltalk-chat", "smalltalk", _smalltalk),
    make("gen:roleplay-bot", "smalltalk", _roleplay),
    make("gen:smalltalk-de", "smalltalk", _smalltalk_de),
    make("gen:smalltalk-es", "smalltalk", _smalltalk_es),
)
