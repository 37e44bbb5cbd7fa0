# ruff: noqa: E501 (prompt templates read best as one line each)
"""Hard puzzles in German, French and Spanish (and a little Italian and Portuguese): state tracking,
time arithmetic, orderings, navigation and syllogisms; also the per-language phrasing shared with
hard_multilingual_maths (lead-ins, closings, system prompts, follow-ups, number words).

They exist so that language is not a proxy for difficulty: the easy side has its own non-English sources.

Over 400 lines on purpose: mostly per-language phrase tables, each beside the puzzle that uses it.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Sequence

from gateway_training.generators.hard_common import (
    LICENCE,
    NAMES,
    SYSTEM_PROMPTS,
    Messages,
    conversation,
    pick,
    sample,
)
from gateway_training.sources import Source

__all__ = [
    "LANGS",
    "LANG_ANSWER",
    "LANG_CLOSINGS",
    "LANG_FOLLOWUPS",
    "LANG_LEADS",
    "LANG_SYSTEMS",
    "SOURCES",
    "lang_finish",
    "lang_num",
]

LANGS = ("de", "de", "fr", "fr", "es", "es", "it", "pt")

LANG_SYSTEMS = {
    "de": ("Du bist ein hilfreicher Assistent.", "Antworte knapp und präzise.", "Erkläre jeden Schritt."),
    "fr": ("Tu es un assistant serviable.", "Réponds de façon concise.", "Explique chaque étape."),
    "es": ("Eres un asistente útil.", "Responde de forma breve.", "Explica cada paso."),
    "it": ("Sei un assistente utile.", "Spiega ogni passaggio."),
    "pt": ("Você é um assistente prestativo.", "Explique cada passo."),
}
LANG_LEADS = {
    "de": ("", "", "Kurze Frage: ", "Kannst du mir helfen? ", "Rätsel: ", "Ich komme nicht weiter. "),
    "fr": ("", "", "Petite question : ", "Tu peux m'aider ? ", "Énigme : ", "Je bloque sur ceci. "),
    "es": ("", "", "Una pregunta: ", "¿Me ayudas? ", "Acertijo: ", "No consigo resolver esto. "),
    "it": ("", "", "Domanda: ", "Mi aiuti? ", "Non riesco a risolverlo. ", "Per domani: "),
    "pt": ("", "", "Pergunta: ", "Pode me ajudar? ", "Estou travado nisto. ", "Para a aula: "),
}
LANG_CLOSINGS = {
    "de": ("", "", " Begründe deine Antwort.", " Bitte mit Rechenweg.", " Nur das Ergebnis, bitte."),
    "fr": ("", "", " Justifie ta réponse.", " Montre les étapes.", " Juste la réponse, merci."),
    "es": ("", "", " Justifica tu respuesta.", " Muestra los pasos.", " Solo la respuesta, por favor."),
    "it": ("", "", " Spiega il ragionamento.", " Mostra i passaggi.", " Grazie!"),
    "pt": ("", "", " Explique o raciocínio.", " Mostre os passos.", " Obrigado!"),
}
LANG_ANSWER = {
    "de": "Schritt für Schritt: {a}",
    "fr": "Étape par étape : {a}",
    "es": "Paso a paso: {a}",
    "it": "Passo per passo: {a}",
    "pt": "Passo a passo: {a}",
}
# Follow-ups that fit any problem; families add their own (a departure time, more people).
LANG_FOLLOWUPS = {
    "de": (
        "Bist du sicher? Rechne nochmal nach.",
        "und umgekehrt?",
        "Erklär den zweiten Schritt genauer.",
        "geht das auch kürzer?",
    ),
    "fr": (
        "Tu es sûr ? Vérifie.",
        "et dans l'autre sens ?",
        "Explique mieux la deuxième étape.",
        "on peut faire plus court ?",
    ),
    "es": (
        "¿Seguro? Compruébalo otra vez.",
        "¿y al revés?",
        "Explica mejor el segundo paso.",
        "¿se puede hacer más corto?",
    ),
    "it": ("sei sicuro? ricontrolla", "e al contrario?"),
    "pt": ("tem certeza? confira", "e ao contrário?"),
}
_MORE_PEOPLE: dict[str, tuple[str, ...]] = {
    "de": ("jetzt für 5 Personen",),
    "fr": ("maintenant pour 5 personnes",),
    "es": ("ahora para 5 personas",),
    "it": ("ora per 5 persone",),
    "pt": ("agora para 5 pessoas",),
}
_LATER: dict[str, tuple[str, ...]] = {
    "de": ("und wenn er um 10 Uhr losfährt?",),
    "fr": ("et s'il partait à 10 h ?",),
    "es": ("¿y si saliera a las 10?",),
    "it": ("e se partisse alle 10?",),
    "pt": ("e se saísse às 10?",),
}

_WEEKDAYS = {
    "de": ("Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"),
    "fr": ("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"),
    "es": ("lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"),
    "it": ("lunedì", "martedì", "mercoledì", "giovedì", "venerdì", "sabato", "domenica"),
    "pt": (
        "segunda-feira",
        "terça-feira",
        "quarta-feira",
        "quinta-feira",
        "sexta-feira",
        "sábado",
        "domingo",
    ),
}
_NUMBERS = {
    "de": (
        "null",
        "eins",
        "zwei",
        "drei",
        "vier",
        "fünf",
        "sechs",
        "sieben",
        "acht",
        "neun",
        "zehn",
        "elf",
        "zwölf",
    ),
    "fr": (
        "zéro",
        "un",
        "deux",
        "trois",
        "quatre",
        "cinq",
        "six",
        "sept",
        "huit",
        "neuf",
        "dix",
        "onze",
        "douze",
    ),
    "es": (
        "cero",
        "uno",
        "dos",
        "tres",
        "cuatro",
        "cinco",
        "seis",
        "siete",
        "ocho",
        "nueve",
        "diez",
        "once",
        "doce",
    ),
    "it": (
        "zero",
        "uno",
        "due",
        "tre",
        "quattro",
        "cinque",
        "sei",
        "sette",
        "otto",
        "nove",
        "dieci",
        "undici",
        "dodici",
    ),
    "pt": (
        "zero",
        "um",
        "dois",
        "três",
        "quatro",
        "cinco",
        "seis",
        "sete",
        "oito",
        "nove",
        "dez",
        "onze",
        "doze",
    ),
}


def lang_num(rng: random.Random, lang: str, n: int) -> str:
    """Small numbers as words about half the time: the hard side must not lean on digits."""
    return _NUMBERS[lang][n] if n <= 12 and rng.random() < 0.5 else str(n)


def lang_finish(rng: random.Random, lang: str, body: str, answer: str, extra: Sequence[str] = ()) -> Messages:
    text = (pick(rng, LANG_LEADS[lang]) + body + pick(rng, LANG_CLOSINGS[lang])).strip()
    if rng.random() < 0.08:
        text = text.lower()
    systems = LANG_SYSTEMS[lang] + (SYSTEM_PROMPTS[0], SYSTEM_PROMPTS[6])
    return conversation(
        rng,
        text,
        answer=LANG_ANSWER[lang].format(a=answer),
        followups=(*LANG_FOLLOWUPS[lang], *extra, *extra),
        systems=systems,
    )


# --- puzzles (reasoning) -----------------------------------------------------------------------------------------

_ITEMS = {
    "de": (
        "einen roten Ball",
        "einen blauen Ball",
        "einen grünen Ball",
        "einen gelben Ball",
        "einen weißen Ball",
    ),
    "fr": ("une balle rouge", "une balle bleue", "une balle verte", "une balle jaune", "une balle blanche"),
    "es": (
        "una pelota roja",
        "una pelota azul",
        "una pelota verde",
        "una pelota amarilla",
        "una pelota blanca",
    ),
    "it": ("una palla rossa", "una palla blu", "una palla verde", "una palla gialla", "una palla bianca"),
    "pt": ("uma bola vermelha", "uma bola azul", "uma bola verde", "uma bola amarela", "uma bola branca"),
}
_SWAP = {
    "de": ("{a} tauscht mit {b}", "{a} und {b} tauschen ihre Bälle", "dann tauschen {a} und {b}"),
    "fr": ("{a} échange avec {b}", "{a} et {b} échangent leurs balles", "puis {a} et {b} échangent"),
    "es": ("{a} intercambia con {b}", "{a} y {b} cambian sus pelotas", "luego {a} y {b} se intercambian"),
    "it": ("{a} scambia con {b}", "{a} e {b} si scambiano le palle"),
    "pt": ("{a} troca com {b}", "{a} e {b} trocam as bolas"),
}
_SWAP_Q = {
    "de": (
        "Zu Beginn: {start}. {steps}. Welchen Ball hat {t} am Ende?",
        "Am Anfang: {start}. Danach: {steps}. Was hält {t} zum Schluss?",
    ),
    "fr": (
        "Au départ, {start}. {steps}. Quelle balle {t} a-t-il à la fin ?",
        "Au début : {start}. Ensuite : {steps}. Qu'est-ce que {t} tient à la fin ?",
    ),
    "es": (
        "Al principio {start}. {steps}. ¿Qué pelota tiene {t} al final?",
        "Inicio: {start}. Después: {steps}. ¿Con qué se queda {t}?",
    ),
    "it": ("All'inizio {start}. {steps}. Quale palla ha {t} alla fine?",),
    "pt": ("No início {start}. {steps}. Que bola {t} tem no final?",),
}
_HAS = {
    "de": "{p} hat {i}",
    "fr": "{p} a {i}",
    "es": "{p} tiene {i}",
    "it": "{p} ha {i}",
    "pt": "{p} tem {i}",
}


def _ml_swaps(rng: random.Random, lang: str) -> tuple[str, str]:
    n = rng.randint(3, 5)
    people = sample(rng, NAMES, n)
    items = sample(rng, _ITEMS[lang], n)
    holding = dict(zip(people, items, strict=True))
    steps = []
    for _ in range(rng.randint(n, n + 3)):
        a, b = sample(rng, people, 2)
        holding[a], holding[b] = holding[b], holding[a]
        steps.append(pick(rng, _SWAP[lang]).format(a=a, b=b))
    start = ", ".join(_HAS[lang].format(p=p, i=i) for p, i in zip(people, items, strict=True))
    t = pick(rng, people)
    body = pick(rng, _SWAP_Q[lang]).format(start=start, steps=", ".join(steps), t=t)
    return body, holding[t]


_TRAIN = {
    "de": (
        "Ein Zug fährt um {t} ab. Die Fahrt dauert {h} Stunden und {m} Minuten, dazu kommt ein Halt von {s} Minuten und {d} Minuten Verspätung. Wann kommt er an?",
        "Mein Bus startet um {t}, fährt {h} h {m} min und steht unterwegs {s} min an einer Haltestelle. Unterwegs verliert er noch {d} Minuten. Um wie viel Uhr bin ich da?",
    ),
    "fr": (
        "Un train part à {t}. Le trajet dure {h} heures et {m} minutes, avec un arrêt de {s} minutes et {d} minutes de retard. À quelle heure arrive-t-il ?",
        "Mon car part à {t}, roule {h} h {m}, s'arrête {s} minutes et prend {d} minutes de retard. J'arrive à quelle heure ?",
    ),
    "es": (
        "Un tren sale a las {t}. El viaje dura {h} horas y {m} minutos, con una parada de {s} minutos y {d} minutos de retraso. ¿A qué hora llega?",
        "Mi autobús sale a las {t}, tarda {h} h {m} min, para {s} minutos y acumula {d} minutos de retraso. ¿A qué hora llego?",
    ),
    "it": (
        "Un treno parte alle {t}. Il viaggio dura {h} ore e {m} minuti, con una sosta di {s} minuti e {d} minuti di ritardo. A che ora arriva?",
    ),
    "pt": (
        "Um comboio parte às {t}. A viagem dura {h} horas e {m} minutos, com uma paragem de {s} minutos e {d} minutos de atraso. A que horas chega?",
    ),
}


def _ml_train(rng: random.Random, lang: str) -> tuple[str, str]:
    start = dt.datetime(2025, 3, 3, rng.randint(5, 22), rng.randrange(0, 60, 5))
    h, m, s, d = (
        rng.randint(1, 6),
        rng.randrange(5, 60, 5),
        rng.choice((5, 10, 15, 20, 25)),
        rng.choice((3, 7, 12, 18)),
    )
    arrive = start + dt.timedelta(hours=h, minutes=m + s + d)
    body = pick(rng, _TRAIN[lang]).format(
        t=f"{start:%H:%M}" if lang != "fr" else f"{start.hour} h {start.minute:02d}",
        h=h,
        m=m,
        s=s,
        d=d,
    )
    return body, f"{arrive:%H:%M}"


_WEEKDAY_Q = {
    "de": (
        "Heute ist {d}. Welcher Wochentag ist in {n} Tagen?",
        "Wenn heute {d} ist, welcher Tag war vor {n} Tagen?",
    ),
    "fr": (
        "Aujourd'hui nous sommes {d}. Quel jour de la semaine serons-nous dans {n} jours ?",
        "Si aujourd'hui est un {d}, quel jour était-ce il y a {n} jours ?",
    ),
    "es": (
        "Hoy es {d}. ¿Qué día de la semana será dentro de {n} días?",
        "Si hoy es {d}, ¿qué día fue hace {n} días?",
    ),
    "it": ("Oggi è {d}. Che giorno della settimana sarà tra {n} giorni?",),
    "pt": ("Hoje é {d}. Que dia da semana será daqui a {n} dias?",),
}


def _ml_weekday(rng: random.Random, lang: str) -> tuple[str, str]:
    d0, n = rng.randrange(7), rng.randint(20, 1000)
    template = pick(rng, _WEEKDAY_Q[lang])
    back = "vor" in template or "il y a" in template or "hace" in template
    return template.format(d=_WEEKDAYS[lang][d0], n=n), _WEEKDAYS[lang][
        (d0 - n) % 7 if back else (d0 + n) % 7
    ]


_BIGGER = {
    "de": ("{a} ist größer als {b}", "{b} ist kleiner als {a}"),
    "fr": ("{a} est plus grand que {b}", "{b} est plus petit que {a}"),
    "es": ("{a} es más alto que {b}", "{b} es más bajo que {a}"),
    "it": ("{a} è più alto di {b}", "{b} è più basso di {a}"),
    "pt": ("{a} é mais alto que {b}", "{b} é mais baixo que {a}"),
}
_ORDER_Q = {
    "de": ("Wer ist am zweitgrößten?", "Wer ist am kleinsten?", "Ordne sie von groß nach klein."),
    "fr": (
        "Qui est le deuxième plus grand ?",
        "Qui est le plus petit ?",
        "Classe-les du plus grand au plus petit.",
    ),
    "es": ("¿Quién es el segundo más alto?", "¿Quién es el más bajo?", "Ordénalos del más alto al más bajo."),
    "it": ("Chi è il secondo più alto?", "Chi è il più basso?"),
    "pt": ("Quem é o segundo mais alto?", "Quem é o mais baixo?"),
}


def _ml_order(rng: random.Random, lang: str) -> tuple[str, str]:
    order = sample(rng, NAMES, rng.randint(4, 6))
    pairs = [(order[i], order[i + 1]) for i in range(len(order) - 1)]
    rng.shuffle(pairs)
    clues = ". ".join(pick(rng, _BIGGER[lang]).format(a=a, b=b) for a, b in pairs)
    return clues + ". " + pick(rng, _ORDER_Q[lang]), ", ".join(order)


_TURNS = {
    "de": ("links abbiegen", "rechts abbiegen", "umdrehen", "{k} Blocks geradeaus gehen"),
    "fr": ("tourner à gauche", "tourner à droite", "faire demi-tour", "avancer de {k} rues"),
    "es": ("girar a la izquierda", "girar a la derecha", "dar media vuelta", "caminar {k} manzanas"),
    "it": ("girare a sinistra", "girare a destra", "tornare indietro", "camminare per {k} isolati"),
    "pt": ("virar à esquerda", "virar à direita", "dar meia-volta", "andar {k} quarteirões"),
}
_DIRS = {
    "de": ("Norden", "Osten", "Süden", "Westen"),
    "fr": ("le nord", "l'est", "le sud", "l'ouest"),
    "es": ("el norte", "el este", "el sur", "el oeste"),
    "it": ("nord", "est", "sud", "ovest"),
    "pt": ("norte", "leste", "sul", "oeste"),
}
_NAV_Q = {
    "de": "Du schaust nach {d}. Du sollst: {steps}. In welche Richtung schaust du am Ende, und wie weit bist du vom Start entfernt?",
    "fr": "Tu regardes vers {d}. Tu dois : {steps}. Dans quelle direction regardes-tu à la fin, et à quelle distance du départ es-tu ?",
    "es": "Miras hacia {d}. Tienes que: {steps}. ¿Hacia dónde miras al final y a qué distancia estás del punto de partida?",
    "it": "Guardi verso {d}. Devi: {steps}. Verso dove guardi alla fine?",
    "pt": "Você está virado para o {d}. Deve: {steps}. Para onde está virado no final?",
}


def _ml_navigation(rng: random.Random, lang: str) -> tuple[str, str]:
    facing = start = rng.randrange(4)
    steps = []
    for _ in range(rng.randint(4, 8)):
        r = rng.randrange(4)
        facing = (facing + (3, 1, 2, 0)[r]) % 4
        steps.append(_TURNS[lang][r].format(k=lang_num(rng, lang, rng.randint(1, 9))))
    return _NAV_Q[lang].format(d=_DIRS[lang][start], steps=", ".join(steps)), _DIRS[lang][facing]


_SYLL = {
    "de": (
        "Alle {a} sind {b}. Einige {b} sind {c}. Folgt daraus, dass einige {a} {c} sind?",
        "Kein {a} ist {b}. Alle {c} sind {a}. Folgt daraus, dass kein {c} {b} ist?",
    ),
    "fr": (
        "Tous les {a} sont des {b}. Certains {b} sont des {c}. Peut-on en conclure que certains {a} sont des {c} ?",
        "Les {a} ne sont jamais des {b}. Tous les {c} sont des {a}. Peut-on conclure que les {c} ne sont jamais des {b} ?",
    ),
    "es": (
        "Todos los {a} son {b}. Algunos {b} son {c}. ¿Se deduce que algunos {a} son {c}?",
        "Los {a} nunca son {b}. Todos los {c} son {a}. ¿Se sigue que los {c} nunca son {b}?",
    ),
    "it": ("Tutti i {a} sono {b}. Alcuni {b} sono {c}. Ne segue che alcuni {a} sono {c}?",),
    "pt": ("Todos os {a} são {b}. Alguns {b} são {c}. Segue-se que alguns {a} são {c}?",),
}
_SYLL_TERMS = {
    "de": ("Musiker", "Lehrer", "Radfahrer", "Vegetarier", "Gärtner", "Schachspieler", "Maler", "Bäcker"),
    "fr": ("musiciens", "professeurs", "cyclistes", "végétariens", "jardiniers", "peintres", "boulangers"),
    "es": ("músicos", "profesores", "ciclistas", "vegetarianos", "jardineros", "pintores", "panaderos"),
    "it": ("musicisti", "insegnanti", "ciclisti", "vegetariani", "giardinieri"),
    "pt": ("músicos", "professores", "ciclistas", "vegetarianos", "jardineiros"),
}


def _ml_syllogism(rng: random.Random, lang: str) -> tuple[str, str]:
    a, b, c = sample(rng, _SYLL_TERMS[lang], 3)
    template = pick(rng, _SYLL[lang])
    valid = template is _SYLL[lang][1] if len(_SYLL[lang]) > 1 else False
    return template.format(a=a, b=b, c=c), _YES_NO[lang][0 if valid else 1]


_YES_NO = {
    "de": ("ja", "nein"),
    "fr": ("oui", "non"),
    "es": ("sí", "no"),
    "it": ("sì", "no"),
    "pt": ("sim", "não"),
}


_NONE: dict[str, tuple[str, ...]] = {}
# Each kind with its own follow-ups per language (added to the generic ones).
_PUZZLES = (
    (_ml_swaps, _MORE_PEOPLE),
    (_ml_train, _LATER),
    (_ml_weekday, _NONE),
    (_ml_order, _MORE_PEOPLE),
    (_ml_navigation, _NONE),
    (_ml_syllogism, _NONE),
)


def _ml_puzzles(rng: random.Random) -> Messages:
    lang = pick(rng, LANGS)
    kind, extra = pick(rng, _PUZZLES)
    body, answer = kind(rng, lang)
    return lang_finish(rng, lang, body, answer, extra.get(lang, ()))


SOURCES: tuple[Source, ...] = (Source("gen:ml-puzzles", "hard", "reasoning", LICENCE, _ml_puzzles),)
