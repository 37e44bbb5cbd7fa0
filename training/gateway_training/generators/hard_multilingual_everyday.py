# ruff: noqa: E501 (prompt templates read best as one line each)
"""Hard everyday maths in German, French and Spanish (some Italian and Portuguese), written as people
ask it in a chat: stacked discounts, an average speed over two legs, a restaurant bill split unevenly,
paint for a room, two savings plans, a bath filling while it drains.

A second hand beside gen:ml-wordproblems (hard_multilingual_maths.py), whose textbook templates are one
way of writing maths word problems in these languages: another way, that no source uses, would go to
diffusion.
"""

from __future__ import annotations

import random

from gateway_training.generators.hard_common import (
    LICENCE,
    NAMES,
    SYSTEM_PROMPTS,
    Messages,
    conversation,
    pick,
)
from gateway_training.generators.hard_multilingual import LANG_SYSTEMS
from gateway_training.sources import Source

__all__ = ["SOURCES"]

_DISCOUNT = {
    "de": "Die Jacke kostet {a} €, ist um {p} % reduziert, und an der Kasse gibt es nochmal {q} % Rabatt. Was zahle ich am Ende, und ist das dasselbe wie {s} % Rabatt?",
    "fr": "La veste coûte {a} €, elle est soldée à -{p} %, et en caisse j'ai encore {q} % de remise. Je paie combien au final, et est-ce pareil que -{s} % ?",
    "es": "La chaqueta cuesta {a} €, tiene un {p} % de descuento y en caja me hacen otro {q} %. ¿Cuánto pago al final? ¿Es lo mismo que un {s} % de descuento?",
    "it": "La giacca costa {a} €, è scontata del {p} % e alla cassa ho un altro {q} % di sconto. Quanto pago alla fine? È come uno sconto del {s} %?",
    "pt": "O casaco custa {a} €, tem {p} % de desconto e na caixa ainda me dão mais {q} %. Quanto pago no fim? É o mesmo que {s} % de desconto?",
}
_SPEED = {
    "de": "Ich fahre {d1} km mit {v1} km/h und danach {d2} km mit {v2} km/h. Wie hoch ist meine Durchschnittsgeschwindigkeit? Mein Kumpel sagt einfach der Mittelwert, stimmt das?",
    "fr": "Je roule {d1} km à {v1} km/h puis {d2} km à {v2} km/h. Quelle est ma vitesse moyenne ? Mon pote dit que c'est juste la moyenne des deux, il a raison ?",
    "es": "Conduzco {d1} km a {v1} km/h y luego {d2} km a {v2} km/h. ¿Cuál es mi velocidad media? Mi amigo dice que es la media de las dos, ¿tiene razón?",
}
_BILL = {
    "de": "Wir waren zu {n} essen, die Rechnung war {t} €. {p} hatte nur einen Salat für {s} € und nichts getrunken, der Rest teilt gleichmäßig, plus {tip} % Trinkgeld auf alles. Wer zahlt wie viel?",
    "fr": "On était {n} au resto, l'addition fait {t} €. {p} n'a pris qu'une salade à {s} € sans boisson, les autres partagent le reste à parts égales, avec {tip} % de pourboire sur le tout. Qui paie combien ?",
    "es": "Fuimos {n} a cenar y la cuenta fue de {t} €. {p} solo pidió una ensalada de {s} € y no bebió; el resto se divide a partes iguales, más un {tip} % de propina sobre todo. ¿Cuánto paga cada uno?",
    "it": "Eravamo in {n} a cena, il conto è {t} €. {p} ha preso solo un'insalata da {s} € e niente da bere, gli altri dividono il resto, più il {tip} % di mancia su tutto. Quanto paga ciascuno?",
    "pt": "Fomos {n} jantar e a conta deu {t} €. {p} só comeu uma salada de {s} € e não bebeu; o resto divide-se igualmente, mais {tip} % de gorjeta sobre tudo. Quanto paga cada um?",
}
_PAINT = {
    "de": "Ein Liter Farbe reicht für {c} m². Mein Zimmer ist {w} mal {l} m groß und {h} m hoch, mit einer Tür von 2 m² und einem Fenster von {f} m². Ich streiche zweimal. Wie viele {k}-Liter-Eimer brauche ich?",
    "fr": "Un litre de peinture couvre {c} m². Ma chambre fait {w} sur {l} m avec {h} m de hauteur, une porte de 2 m² et une fenêtre de {f} m². Je passe deux couches. Combien de pots de {k} litres dois-je acheter ?",
    "es": "Un litro de pintura cubre {c} m². Mi habitación mide {w} por {l} m y {h} m de alto, con una puerta de 2 m² y una ventana de {f} m². Voy a dar dos manos. ¿Cuántos botes de {k} litros necesito?",
}
_SAVINGS = {
    "de": "Ich spare jeden Monat {a} €, meine Schwester {b} €, aber sie hat schon {h} € auf dem Konto und ich nichts. Ab welchem Monat habe ich mehr als sie?",
    "fr": "J'économise {a} € par mois et ma sœur {b} €, mais elle a déjà {h} € de côté et moi rien. À partir de quel mois j'aurai plus qu'elle ?",
    "es": "Ahorro {a} € al mes y mi hermana {b} €, pero ella ya tiene {h} € y yo nada. ¿A partir de qué mes tendré más que ella?",
    "it": "Risparmio {a} € al mese e mia sorella {b} €, ma lei ha già {h} € e io niente. Da quale mese avrò più di lei?",
    "pt": "Poupo {a} € por mês e a minha irmã {b} €, mas ela já tem {h} € e eu nada. A partir de que mês terei mais do que ela?",
}
_BATH = {
    "de": "Mit offenem Hahn ist die Wanne in {a} Minuten voll, der offene Abfluss leert sie in {b} Minuten. Ich hab vergessen, den Stöpsel reinzumachen. Wie lange dauert es jetzt?",
    "fr": "Robinet ouvert, la baignoire se remplit en {a} minutes, et la bonde la vide en {b} minutes. J'ai oublié de mettre le bouchon. Ça va prendre combien de temps ?",
    "es": "Con el grifo abierto la bañera se llena en {a} minutos y el desagüe la vacía en {b}. Se me olvidó poner el tapón. ¿Cuánto tardará en llenarse?",
}
_FRAMES = {
    "de": (
        "{q}",
        "Hilfe, {q}",
        "Kurze Matheaufgabe aus dem Alltag: {q}",
        "{q} Ich komm nicht drauf.",
        "Sag mal, {q}",
    ),
    "fr": (
        "{q}",
        "Au secours, {q}",
        "Petit calcul du quotidien : {q}",
        "{q} J'arrive pas à trouver.",
        "Dis, {q}",
    ),
    "es": ("{q}", "Ayuda, {q}", "Cuenta de la vida real: {q}", "{q} No me sale.", "Oye, {q}"),
    "it": ("{q}", "Aiuto, {q}", "Conto di tutti i giorni: {q}", "{q} Non mi torna."),
    "pt": ("{q}", "Socorro, {q}", "Conta do dia a dia: {q}", "{q} Não estou a conseguir."),
}
_FOLLOW = {
    "de": ("und mit 3 Leuten?", "rechne nochmal nach", "wie kommst du darauf?"),
    "fr": ("et à trois ?", "tu peux revérifier ?", "comment tu trouves ça ?"),
    "es": ("¿y si somos tres?", "revísalo otra vez", "¿cómo llegas a eso?"),
    "it": ("e se fossimo in tre?", "ricontrolla"),
    "pt": ("e se fôssemos três?", "confere outra vez"),
}
_ANSWER = {
    "de": "Rechnen wir es Schritt für Schritt durch: ...",
    "fr": "Faisons le calcul étape par étape : ...",
    "es": "Vamos paso a paso: ...",
    "it": "Facciamo il conto passo per passo: ...",
    "pt": "Vamos passo a passo: ...",
}


def _body(rng: random.Random, lang: str) -> str:
    families = [f for f in (_DISCOUNT, _SPEED, _BILL, _PAINT, _SAVINGS, _BATH) if lang in f]
    family = pick(rng, families)
    if family is _DISCOUNT:
        p, q = rng.choice((10, 20, 25, 30, 40)), rng.choice((5, 10, 15, 20))
        return family[lang].format(a=rng.choice((49, 60, 80, 95, 120, 150)), p=p, q=q, s=p + q)
    if family is _SPEED:
        return family[lang].format(
            d1=rng.choice((60, 90, 120, 180)),
            v1=rng.choice((80, 90, 100, 120)),
            d2=rng.choice((20, 40, 60)),
            v2=rng.choice((30, 40, 50)),
        )
    if family is _BILL:
        return family[lang].format(
            n=rng.randint(3, 7),
            t=rng.randint(90, 260),
            p=pick(rng, NAMES),
            s=rng.choice((9, 11, 12, 14)),
            tip=rng.choice((5, 10, 15)),
        )
    if family is _PAINT:
        return family[lang].format(
            c=rng.choice((6, 8, 10)),
            w=rng.choice((3, 4, 5)),
            l=rng.choice((3, 4, 6)),
            h=rng.choice(("2,5", "2,6", "2,4")),
            f=rng.choice(("1,5", "2", "3")),
            k=rng.choice(("2,5", "5", "10")),
        )
    if family is _SAVINGS:
        a = rng.choice((40, 50, 75, 100))
        return family[lang].format(a=a, b=a - rng.choice((10, 20, 30)), h=rng.choice((250, 400, 600, 900)))
    a = rng.randint(6, 15)
    return family[lang].format(a=a, b=a + rng.randint(3, 12))


def _draw(rng: random.Random) -> Messages:
    lang = pick(rng, ("de", "de", "fr", "fr", "es", "es", "it", "pt"))
    body = _body(rng, lang)
    text = pick(rng, _FRAMES[lang]).format(q=body[0].lower() + body[1:] if rng.random() < 0.3 else body)
    if rng.random() < 0.08:
        text = text.lower()
    systems = LANG_SYSTEMS[lang] + (SYSTEM_PROMPTS[0],)
    return conversation(rng, text, answer=_ANSWER[lang], followups=_FOLLOW[lang], systems=systems)


SOURCES: tuple[Source, ...] = (Source("gen:ml-everyday-maths", "hard", "math-word", LICENCE, _draw),)
