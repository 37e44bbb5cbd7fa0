# ruff: noqa: E501 (prompt templates read best as one line each)
"""Hard maths in German, French and Spanish (and a little Italian and Portuguese): word problems,
competition-style questions and proof requests.

They exist so that language is not a proxy for difficulty: the easy side has its own non-English sources.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from fractions import Fraction

from gateway_training.generators.hard_common import (
    LICENCE,
    NAMES,
    SYSTEM_PROMPTS,
    Messages,
    conversation,
    pick,
    sample,
)
from gateway_training.generators.hard_multilingual import (
    LANG_CLOSINGS,
    LANG_LEADS,
    LANG_SYSTEMS,
    LANGS,
    lang_finish,
    lang_num,
)
from gateway_training.sources import Source

__all__ = ["SOURCES"]

# --- word problems and competition maths ------------------------------------------------------------------------

_WORK = {
    "de": "{p} streicht den Zaun allein in {a} Stunden, {q} schafft es in {b} Stunden. Wie lange brauchen sie zusammen?",
    "fr": "{p} repeint la clôture seul en {a} heures, {q} en {b} heures. Combien de temps leur faut-il ensemble ?",
    "es": "{p} pinta la valla solo en {a} horas y {q} en {b} horas. ¿Cuánto tardan juntos?",
    "it": "{p} dipinge la staccionata da solo in {a} ore, {q} in {b} ore. Quanto ci mettono insieme?",
    "pt": "{p} pinta a cerca sozinho em {a} horas e {q} em {b} horas. Quanto tempo levam juntos?",
}
_PRICES = {
    "de": "Ein Heft und ein Stift kosten zusammen {t} Euro. Das Heft kostet {d} Euro mehr als der Stift. Was kostet der Stift?",
    "fr": "Un cahier et un stylo coûtent {t} euros en tout. Le cahier coûte {d} euros de plus que le stylo. Combien coûte le stylo ?",
    "es": "Un cuaderno y un bolígrafo cuestan {t} euros en total. El cuaderno cuesta {d} euros más que el bolígrafo. ¿Cuánto cuesta el bolígrafo?",
    "it": "Un quaderno e una penna costano {t} euro in tutto. Il quaderno costa {d} euro più della penna. Quanto costa la penna?",
    "pt": "Um caderno e uma caneta custam {t} euros no total. O caderno custa {d} euros a mais que a caneta. Quanto custa a caneta?",
}
_AGES = {
    "de": "{p} ist {k}-mal so alt wie {q}. In {y} Jahren ist {p} nur noch doppelt so alt. Wie alt sind beide heute?",
    "fr": "{p} a {k} fois l'âge de {q}. Dans {y} ans, {p} n'aura plus que le double de son âge. Quel âge ont-ils aujourd'hui ?",
    "es": "{p} tiene {k} veces la edad de {q}. Dentro de {y} años tendrá solo el doble. ¿Qué edad tienen hoy?",
    "it": "{p} ha {k} volte l'età di {q}. Tra {y} anni avrà solo il doppio. Quanti anni hanno oggi?",
    "pt": "{p} tem {k} vezes a idade de {q}. Daqui a {y} anos terá só o dobro. Quantos anos têm hoje?",
}
_LASTDIGIT = {
    "de": (
        "Was ist die letzte Ziffer von {a} hoch {b}?",
        "Welchen Rest lässt {a} hoch {b} bei Division durch {m}?",
    ),
    "fr": (
        "Quel est le dernier chiffre de {a} puissance {b} ?",
        "Quel est le reste de la division de {a} puissance {b} par {m} ?",
    ),
    "es": (
        "¿Cuál es la última cifra de {a} elevado a {b}?",
        "¿Qué resto deja {a} elevado a {b} al dividirlo entre {m}?",
    ),
    "it": ("Qual è l'ultima cifra di {a} elevato alla {b}?",),
    "pt": ("Qual é o último algarismo de {a} elevado a {b}?",),
}
_MARBLES = {
    "de": "In einer Tüte sind {r} rote und {b} blaue Kugeln. Ich ziehe zwei ohne Zurücklegen. Wie groß ist die Wahrscheinlichkeit, dass beide dieselbe Farbe haben?",
    "fr": "Un sac contient {r} billes rouges et {b} billes bleues. J'en tire deux sans remise. Quelle est la probabilité qu'elles soient de la même couleur ?",
    "es": "Una bolsa tiene {r} canicas rojas y {b} azules. Saco dos sin reposición. ¿Cuál es la probabilidad de que sean del mismo color?",
    "it": "Un sacchetto contiene {r} biglie rosse e {b} blu. Ne estraggo due senza reinserimento. Qual è la probabilità che siano dello stesso colore?",
    "pt": "Um saco tem {r} berlindes vermelhos e {b} azuis. Tiro dois sem reposição. Qual é a probabilidade de serem da mesma cor?",
}
_ANAGRAM = {
    "de": "Auf wie viele verschiedene Arten kann man die Buchstaben des Wortes {w} anordnen?",
    "fr": "De combien de façons différentes peut-on ranger les lettres du mot {w} ?",
    "es": "¿De cuántas formas distintas se pueden ordenar las letras de la palabra {w}?",
    "it": "In quanti modi diversi si possono ordinare le lettere della parola {w}?",
    "pt": "De quantas maneiras diferentes se podem ordenar as letras da palavra {w}?",
}
_WORDS = {
    "de": ("KAFFEE", "ANANAS", "BANANE", "MISSISSIPPI", "TEETASSE", "PAPAGEI"),
    "fr": ("BANANE", "ANANAS", "CHOCOLAT", "PAPILLON", "MISSISSIPPI", "CERISES"),
    "es": ("BANANA", "CARRETERA", "PAPAGAYO", "MISSISSIPPI", "ARROZAL", "CEREZA"),
    "it": ("BANANA", "PAPPAGALLO", "CARROZZA"),
    "pt": ("BANANA", "PAPAGAIO", "ARROZ"),
}


def _ml_wordproblem(rng: random.Random) -> Messages:
    lang = pick(rng, LANGS)
    p, q = sample(rng, NAMES, 2)
    kind = rng.randrange(6)
    if kind == 0:
        a, b = rng.randint(2, 12), rng.randint(2, 12)
        body, ans = (
            _WORK[lang].format(p=p, q=q, a=lang_num(rng, lang, a), b=lang_num(rng, lang, b)),
            f"{Fraction(a * b, a + b)} h",
        )
    elif kind == 1:
        small, diff = rng.randint(1, 30) * 5, rng.randint(10, 90) * 10
        body, ans = (
            _PRICES[lang].format(
                t=f"{(2 * small + diff) / 100:.2f}".replace(".", ","), d=f"{diff / 100:.2f}".replace(".", ",")
            ),
            f"{small / 100:.2f}",
        )
    elif kind == 2:
        child, k = rng.randint(3, 12), rng.randint(3, 5)
        # (k*c + y) = 2 (c + y)  ->  y = (k - 2) c
        body, ans = (
            _AGES[lang].format(p=p, q=q, k=lang_num(rng, lang, k), y=(k - 2) * child),
            f"{k * child} / {child}",
        )
    elif kind == 3:
        a, b, m = rng.randint(2, 29), rng.randint(30, 3000), rng.choice((3, 7, 9, 11, 13))
        template = pick(rng, _LASTDIGIT[lang])
        body, ans = template.format(a=a, b=b, m=m), str(pow(a, b, m if "{m}" in template else 10))
    elif kind == 4:
        r, b = rng.randint(2, 9), rng.randint(2, 9)
        body = _MARBLES[lang].format(r=lang_num(rng, lang, r), b=lang_num(rng, lang, b))
        ans = str(Fraction(r * (r - 1) + b * (b - 1), (r + b) * (r + b - 1)))
    else:
        w = pick(rng, _WORDS[lang])
        n = math.factorial(len(w))
        for c in Counter(w).values():
            n //= math.factorial(c)
        body, ans = _ANAGRAM[lang].format(w=w), str(n)
    return lang_finish(rng, lang, body, ans)


# --- proofs ------------------------------------------------------------------------------------------------------

_PROOF_ASK = {
    "de": (
        "Beweise, dass {s}.",
        "Zeige, dass {s}.",
        "Kannst du beweisen, dass {s}?",
        "Warum gilt immer, dass {s}? Ich brauche einen Beweis.",
    ),
    "fr": (
        "Démontre que {s}.",
        "Montre que {s}.",
        "Peux-tu prouver que {s} ?",
        "Pourquoi est-ce que {s} ? Je veux une démonstration.",
    ),
    "es": (
        "Demuestra que {s}.",
        "Prueba que {s}.",
        "¿Puedes demostrar que {s}?",
        "¿Por qué siempre {s}? Quiero una demostración.",
    ),
    "it": (
        "Dimostra che {s}.",
        "Puoi dimostrare che {s}?",
        "Mi serve una dimostrazione rigorosa che {s}.",
        "Perché {s}? Voglio una dimostrazione.",
    ),
    "pt": (
        "Prove que {s}.",
        "Demonstre que {s}.",
        "Preciso de uma demonstração rigorosa de que {s}.",
        "Por que {s}? Quero uma prova.",
    ),
}
_PROOF_STATEMENTS = {
    "de": (
        "die Summe zweier ungerader Zahlen gerade ist",
        "es unendlich viele Primzahlen gibt",
        "die Wurzel aus {q} irrational ist",
        "n hoch drei minus n immer durch sechs teilbar ist",
        "das Produkt von {k} aufeinanderfolgenden Zahlen durch {k}! teilbar ist",
        "jede Quadratzahl bei Division durch vier den Rest null oder eins lässt",
        "die Summe der ersten n ungeraden Zahlen n² ist",
        "eine Menge mit n Elementen 2^n Teilmengen hat",
        "zwei aufeinanderfolgende Zahlen keinen gemeinsamen Teiler größer als eins haben",
        "unter je {m} ganzen Zahlen zwei sind, deren Differenz durch {n} teilbar ist",
        "die Winkelsumme im Dreieck 180 Grad beträgt",
        "wenn n² gerade ist, auch n gerade ist",
    ),
    "fr": (
        "la somme de deux nombres impairs est paire",
        "il existe une infinité de nombres premiers",
        "la racine carrée de {q} est irrationnelle",
        "n au cube moins n est toujours divisible par six",
        "le produit de {k} entiers consécutifs est divisible par {k}!",
        "un carré parfait laisse un reste de zéro ou un dans la division par quatre",
        "la somme des n premiers nombres impairs vaut n²",
        "un ensemble à n éléments possède 2^n parties",
        "deux entiers consécutifs sont toujours premiers entre eux",
        "parmi {m} entiers quelconques, deux ont une différence divisible par {n}",
        "si n² est pair, alors n est pair",
        "un arbre à n sommets a n - 1 arêtes",
    ),
    "es": (
        "la suma de dos números impares es par",
        "hay infinitos números primos",
        "la raíz cuadrada de {q} es irracional",
        "n al cubo menos n siempre es divisible entre seis",
        "el producto de {k} enteros consecutivos es divisible entre {k}!",
        "todo cuadrado perfecto deja resto cero o uno al dividirlo entre cuatro",
        "la suma de los n primeros impares es n²",
        "un conjunto con n elementos tiene 2^n subconjuntos",
        "dos enteros consecutivos no tienen divisores comunes mayores que uno",
        "entre {m} enteros cualesquiera hay dos cuya diferencia es divisible entre {n}",
        "si n² es par, entonces n es par",
        "en cualquier fiesta el número de personas que dieron un número impar de apretones de manos es par",
    ),
    "it": (
        "la somma di due numeri dispari è pari",
        "esistono infiniti numeri primi",
        "la radice quadrata di {q} è irrazionale",
    ),
    "pt": (
        "a soma de dois números ímpares é par",
        "existem infinitos números primos",
        "a raiz quadrada de {q} é irracional",
    ),
}
_PROOF_FOLLOW = {
    "de": ("beweise die Umkehrung", "und für drei Zahlen?", "geht das auch ohne Induktion?"),
    "fr": ("démontre la réciproque", "et pour trois nombres ?", "et sans récurrence ?"),
    "es": ("demuestra el recíproco", "¿y para tres números?", "¿y sin inducción?"),
    "it": ("dimostra il viceversa", "e per tre numeri?"),
    "pt": ("prove a recíproca", "e para três números?"),
}


_PROOF_SKETCH = {
    "de": "Beweisskizze: Man schreibt die Zahlen in allgemeiner Form, rechnet nach und schließt per Widerspruch oder Induktion. ∎",
    "fr": "Esquisse : on écrit les nombres sous forme générale, on calcule, puis on conclut par l'absurde ou par récurrence. ∎",
    "es": "Esbozo: se escriben los números en forma general, se calcula y se concluye por contradicción o inducción. ∎",
    "it": "Schema: si scrivono i numeri in forma generale e si conclude per assurdo o per induzione. ∎",
    "pt": "Esboço: escrevem-se os números na forma geral e conclui-se por absurdo ou indução. ∎",
}


def _ml_proofs(rng: random.Random) -> Messages:
    lang = pick(rng, LANGS)
    n = rng.randint(3, 12)
    q, k = pick(rng, (2, 3, 5, 6, 7, 10, 11)), rng.randint(2, 6)
    statement = pick(rng, _PROOF_STATEMENTS[lang]).format(q=q, k=k, n=n, m=n + 1)
    leads = [x for x in LANG_LEADS[lang] if not x.startswith(("Rätsel", "Énigme", "Acertijo"))]
    text = (
        pick(rng, leads)
        + pick(rng, _PROOF_ASK[lang]).format(s=statement)
        + pick(rng, LANG_CLOSINGS[lang][:4])
    ).strip()
    systems = LANG_SYSTEMS[lang] + (SYSTEM_PROMPTS[0],)
    return conversation(
        rng, text, answer=_PROOF_SKETCH[lang], followups=_PROOF_FOLLOW[lang], systems=systems, p_followup=0.2
    )


SOURCES: tuple[Source, ...] = (
    Source("gen:ml-wordproblems", "hard", "math-word", LICENCE, _ml_wordproblem),
    Source("gen:ml-proofs", "hard", "math", LICENCE, _ml_proofs),
)
