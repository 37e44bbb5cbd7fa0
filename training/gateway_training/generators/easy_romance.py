"""Easy: summarise, shorten, translate or make polite a long French or Italian text given in the prompt.

A second family of long non-English texts on the easy side: with German the only one, a held-out German
summary read like a German puzzle (leave-one-source-out: 0 %). Notices, emails and short news, with
dates, prices and times that need no computing.
"""

from __future__ import annotations

import random

from gateway_training.sources import Messages, Source

__all__ = ["SOURCES"]

_LICENCE = "Apache-2.0 (this project)"

_FR_NAMES = ["Claire", "Julien", "Amélie", "Karim", "Sophie", "Lucas", "Inès", "Hugo", "Léa", "Mathis"]
_IT_NAMES = ["Giulia", "Marco", "Chiara", "Luca", "Sara", "Matteo", "Elena", "Davide", "Anna", "Paolo"]
_FR_CITIES = ["Lyon", "Nantes", "Lille", "Rennes", "Grenoble", "Bordeaux", "Dijon", "Strasbourg"]
_IT_CITIES = ["Torino", "Bologna", "Verona", "Genova", "Padova", "Bari", "Trieste", "Parma"]

_FR_SENTENCES = [
    "La mairie de {city} a annoncé mardi la réouverture de la médiathèque après {n} mois de travaux.",
    "Le nouveau bâtiment accueillera une salle de lecture pour les enfants et un espace numérique.",
    "Les travaux ont coûté {price} euros, financés en partie par la région.",
    "L'inauguration aura lieu le {day} {month} à {hour} h, en présence des habitants du quartier.",
    "Les horaires d'ouverture restent les mêmes qu'avant, du mardi au samedi.",
    "Un parking à vélos de {n} places a été installé devant l'entrée principale.",
    "Bonjour {name}, je te confirme que la réunion de projet est déplacée au {day} {month}.",
    "Merci de m'envoyer le compte rendu avant vendredi, et de prévenir l'équipe de {city}.",
    "Le devis du fournisseur s'élève à {price} euros hors taxes, livraison comprise.",
    "Je serai en congé du {day} au {day2} {month}; {name} me remplacera pendant mon absence.",
    "L'association organise une brocante le dimanche {day} {month} sur la place du marché.",
    "Les inscriptions sont ouvertes jusqu'au {day2} {month} et coûtent {n} euros par emplacement.",
    "Le restaurant propose désormais un menu du jour à {n} euros, boisson comprise.",
    "Les clients ont salué l'accueil chaleureux, mais regrettent l'attente le samedi soir.",
]
_IT_SENTENCES = [
    "Il comune di {city} ha annunciato martedì la riapertura della biblioteca dopo {n} mesi di lavori.",
    "Il nuovo edificio ospiterà una sala lettura per bambini e uno spazio digitale.",
    "I lavori sono costati {price} euro, finanziati in parte dalla regione.",
    "L'inaugurazione si terrà il {day} {month} alle {hour}, alla presenza dei cittadini del quartiere.",
    "Gli orari di apertura restano invariati, dal martedì al sabato.",
    "Ciao {name}, ti confermo che la riunione di progetto è spostata al {day} {month}.",
    "Ti chiedo di mandarmi il verbale entro venerdì e di avvisare il gruppo di {city}.",
    "Il preventivo del fornitore è di {price} euro più IVA, consegna inclusa.",
    "Sarò in ferie dal {day} al {day2} {month}; {name} mi sostituirà durante la mia assenza.",
    "L'associazione organizza un mercatino domenica {day} {month} in piazza.",
    "Le iscrizioni sono aperte fino al {day2} {month} e costano {n} euro per banco.",
    "Il ristorante propone ora un menù del giorno a {n} euro, bevanda inclusa.",
]
_FR_MONTHS = ["janvier", "mars", "avril", "mai", "juin", "septembre", "octobre", "novembre"]
_IT_MONTHS = ["gennaio", "marzo", "aprile", "maggio", "giugno", "settembre", "ottobre", "novembre"]
_FR_ASKS = [
    "Résume ce texte en trois phrases.",
    "Peux-tu raccourcir ce message ?",
    "Traduis ce texte en anglais, s'il te plaît.",
    "Rends ce mail plus poli.",
    "Fais-moi une liste à puces des informations importantes.",
    "Corrige les fautes de ce texte.",
    "Reformule ce paragraphe de façon plus simple.",
]
_IT_ASKS = [
    "Riassumi questo testo in tre frasi.",
    "Puoi accorciare questo messaggio?",
    "Traduci questo testo in inglese, per favore.",
    "Rendi questa mail più cortese.",
    "Fammi un elenco puntato delle informazioni importanti.",
    "Riformula questo paragrafo in modo più semplice.",
]


def _text(
    rng: random.Random, sentences: list[str], names: list[str], cities: list[str], months: list[str]
) -> str:
    chosen = rng.sample(sentences, rng.randint(4, min(9, len(sentences))))
    values = {
        "city": rng.choice(cities),
        "name": rng.choice(names),
        "n": rng.randint(2, 40),
        "price": f"{rng.randint(2, 900)} {rng.randint(100, 999)}",
        "day": rng.randint(1, 14),
        "day2": rng.randint(15, 28),
        "month": rng.choice(months),
        "hour": rng.randint(9, 19),
    }
    body = " ".join(s.format(**values) for s in chosen)
    if rng.random() < 0.4:  # two paragraphs
        cut = body.find(". ", len(body) // 2)
        if cut > 0:
            body = body[: cut + 1] + "\n\n" + body[cut + 2 :]
    return body


def _draw(rng: random.Random) -> Messages:
    if rng.random() < 0.55:
        ask = rng.choice(_FR_ASKS)
        text = _text(rng, _FR_SENTENCES, _FR_NAMES, _FR_CITIES, _FR_MONTHS)
    else:
        ask = rng.choice(_IT_ASKS)
        text = _text(rng, _IT_SENTENCES, _IT_NAMES, _IT_CITIES, _IT_MONTHS)
    layout = rng.random()
    if layout < 0.5:
        content = f"{ask}\n\n{text}"
    elif layout < 0.8:
        content = f'{ask}\n\n"""{text}"""'
    else:
        content = f"{text}\n\n{ask}"
    return [{"role": "user", "content": content}]


SOURCES = (Source("gen:transform-fr-it", "easy", "transform", _LICENCE, _draw),)
