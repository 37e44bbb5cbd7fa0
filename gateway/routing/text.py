"""What the difficulty scorer reads in a piece of text: its words and the shape of the text.

``featurize`` turns text into a set of named binary features, the same at training and at run time:

- ``w:<word>`` and ``b:<word> <word>``: lowercased words and word pairs, numbers folded into ``0`` so that
  "7 apples" and "12 apples" are one feature.
- ``s:<what>=<bucket>``: the structure, language-independent: length, numbers, numbers with units,
  clock times, dates, money, arithmetic, maths notation, questions, sentences, names (enumerated
  entities), commas, lists, tables, code-like identifiers, the register of chat (exclamations,
  laughter, emoticons, emoji). Counts are bucketed, so a linear model can
  weigh "three names and a question" differently from "one name" without any scaling.
- ``p:<word>`` and ``ps:<what>=<bucket>``: when the turn is a short instruction and a long pasted text
  ("Summarise this:\n\n<an email>", "<a timetable>\n\nWhen do I arrive?"), the pasted text's words and
  shape, apart from the instruction's: what is asked decides more than what is pasted.

Only a window of the text is read: its first ``HEAD_CHARS`` and last ``TAIL_CHARS`` characters. An
instruction sits at the start or the end of a long turn ("Summarise this: ...", "... Which ball does
Bob hold?"), and the cost stays flat however long the turn is (the bench's 1 MB turn costs what an
8,000-character one does). Everything here is one regular-expression pass for the words (linear: no
nested repetition), ``str.count`` and set look-ups; the few other patterns run only on a window that
holds the character they start with.
"""

from __future__ import annotations

import itertools
import re

__all__ = ["HEAD_CHARS", "TAIL_CHARS", "featurize", "split_payload"]

HEAD_CHARS = 1200
TAIL_CHARS = 400

_TOKEN = re.compile(r"\w+")
# Every ASCII character that ``\w`` does not match, as a space: on ASCII text, ``translate`` then
# ``split`` gives the tokens ``_TOKEN.findall`` does, in a third of the time (issue 15: the long turn's
# 400 µs budget; the pattern builds a match per word, ``split`` only the strings).
_NOT_WORD = "".join(c if c.isalnum() or c == "_" else " " for c in map(chr, range(128)))
_UNITS = frozenset(
    """km kg mg g m cm mm mi mile miles ft feet foot inch inches yd yard yards lb lbs pound pounds oz ounce
    ounces l ml liter liters litre litres gallon gallons cup cups h hr hrs hour hours min mins minute
    minutes s sec secs second seconds day days week weeks month months year years mph kmh percent degrees
    degree euro euros dollar dollars cent cents people persons person workers students apples items km²
    stunden stunde minuten tage jahre euro heures heure jours ans horas hora minutos días años metros
    kilómetros kilometer meter metres meters""".split()
)
# Words that open a sentence or address the reader: a capitalised one is not a name.
_NOT_NAMES = frozenset(
    """the a an i what how why when where who which whose can could would should please is are do does
    did if my in on at for to and or but so then now also yes no hi hello hey thanks thank ok okay this
    that these those it its we you your our they there here let give tell write make explain describe
    summarise summarize translate list find show help create draft rewrite plan is was be""".split()
)
# Domain lexicons, several languages: how many distinct words of each a text uses is a feature
# (s:code_terms=2-3). Single words say little (a "library" may hold books), but a count learned against
# counter-examples transfers to requests no training source wrote: a held-out source of code requests
# shares few words with the others, and almost always two or more of these.
_CODE_TERMS = frozenset(
    """python javascript typescript java rust golang kotlin swift ruby php perl scala haskell elixir sql
    postgres postgresql mysql sqlite mongodb redis bash shell powershell regex regexp api apis endpoint
    endpoints function functions method methods class classes variable variables compiler compile bug bugs
    debug debugging exception exceptions traceback stacktrace segfault react vue angular django flask
    fastapi spring node nodejs npm pip docker dockerfile kubernetes k8s helm terraform git github json yaml
    xml html css http https rest graphql grpc websocket database query queries index thread threads async
    await asyncio coroutine goroutine mutex deadlock race cache algorithm recursion recursive array arrays
    hashmap dict pointer pointers struct enum interface generic generics lambda closure callback refactor
    refactoring unittest pytest jest linter runtime null undefined boolean integer string parser lexer
    backend frontend microservice kafka nginx linux cli sdk jvm gc heap stack memoization complexity
    vectorise vectorize parallelise parallelize serialize deserialize schema migration orm webpack
    useeffect usestate hook hooks component components props pipeline cron scraper handler handlers
    allocation allocations buffer buffering streaming unicode utf encoding timeout concurrency concurrent
    multithreaded leak crash crashes repo repository jq csv cpu gpu ram latency throughput idempotent
    sharding shard cli tui gui""".split()
)
_CODE_VERBS = frozenset(
    """write implement refactor debug fix optimise optimize port rewrite parallelise parallelize deploy
    compile profile vectorise vectorize code program script automate benchmark test""".split()
)
# The English list, then the same list translated into the languages the generators write (de, fr, es,
# it, pt), term by term, leaving out translations that are everyday words ("rapport", "prueba", "razón",
# "rayon", "radio", "Reihe", "Kreis"; "serie", which is a TV series: held out, it sent "¿Qué serie me
# recomiendas?" to the autoregressive backend): a maths request in German should count its terms as
# one in English does (issue 15: held out, multilingual word problems 84.5 -> 89.2 %).
_MATH_TERMS = frozenset(
    """prove proof proofs theorem lemma corollary integer integers prime primes divisible divisor divisors
    remainder modulo mod equation equations polynomial polynomials derivative integral integrals
    probability probabilities factorial factorize factorise sum sequence sequences series converge
    converges convergence irrational rational root roots digit digits inequality maximum minimum
    maximise maximize minimise minimize combinatorics permutations combinations matrix matrices
    determinant eigenvalue vector vectors logarithm exponent exponential geometry triangle triangles
    circle radius angle angles perimeter area volume fraction fractions percent ratio gcd lcm

    beweise beweis beweisen zeige lemma korollar ganzzahl ganzzahlen ganze zahlen primzahl primzahlen
    teilbar teiler rest gleichung gleichungen polynom polynome ableitung integral integrale
    wahrscheinlichkeit wahrscheinlichkeiten fakultät faktorisiere summe folge konvergiert
    konvergenz irrational rational wurzel wurzeln ziffer ziffern ungleichung maximum minimum maximiere
    minimiere kombinatorik permutationen kombinationen matrix matrizen determinante eigenwert vektor
    vektoren logarithmus exponent exponentiell geometrie dreieck dreiecke radius winkel
    fläche flächeninhalt volumen bruch brüche prozent verhältnis ggt kgv

    démontre démontrer démonstration preuve théorème lemme corollaire entier entiers premier premiers
    divisible diviseur diviseurs reste équation équations polynôme polynômes dérivée intégrale intégrales
    probabilité probabilités factorielle factoriser somme suite suites converge convergence
    irrationnel rationnel racine racines chiffre chiffres inégalité maximiser minimiser combinatoire
    combinaisons matrice déterminant vecteur vecteurs logarithme exposant exponentielle géométrie cercle
    périmètre aire pourcentage pgcd ppcm

    demuestra demostrar demostración teorema lema corolario entero enteros primo primos divisor divisores
    resto módulo ecuación ecuaciones polinomio polinomios derivada integrales probabilidad probabilidades
    factorizar suma sucesión sucesiones converge convergencia irracional racional raíz raíces
    dígito dígitos cifra cifras desigualdad máximo mínimo maximizar minimizar combinatoria permutaciones
    combinaciones matriz determinante autovalor vectores logaritmo exponente exponencial geometría
    triángulo triángulos círculo ángulo ángulos perímetro área volumen fracción fracciones porcentaje
    mcd mcm

    dimostra dimostrare dimostrazione corollario intero interi primi divisibile divisore divisori
    equazione equazioni polinomio polinomi derivata integrale integrali probabilità fattoriale
    fattorizza somma successione successioni irrazionale razionale radice radici cifre disuguaglianza
    massimo minimo massimizza minimizza permutazioni combinazioni matrice matrici autovalore vettore
    vettori esponente esponenziale triangolo triangoli cerchio raggio angolo angoli perimetro frazione
    frazioni percentuale numeri

    demonstre demonstrar demonstração inteiro inteiros divisível equação equações polinômio polinómio
    probabilidade fatorial fatorar soma sequência convergência raiz raízes algarismo algarismos
    desigualdade permutações combinações matrizes vetor vetores expoente fração frações porcentagem mdc
    mmc""".split()
)
_TRANSFORM_TERMS = frozenset(
    """summarise summarize summary summarising summarizing tldr translate translation translating rewrite
    rephrase paraphrase proofread shorten condense reformat reword polish bullet bullets outline
    extract list
    zusammenfassen zusammenfassung fasse übersetze übersetzen übersetzung umformulieren formuliere
    korrigiere kürze résume résumer résumé traduis traduire traduction reformule reformuler corrige
    raccourcis resume resumir resumen traduce traducir traducción reescribe reformula corrige acorta
    riassumi riassunto traduci traduzione riformula resuma traduza reescreva""".split()
)
_DOMAIN = _CODE_TERMS | _MATH_TERMS
_LAUGHTER = frozenset("haha hahaha hehe lol lmao omg xd xx yay ugh wow aww hmm jaja mdr".split())
# Words of feeling, opinion and company, several languages: small talk is about how the speaker or the
# listener is and what they like, a task about something to work out. A count pooled over languages
# carries what English sources teach to a Spanish chat. No pets: "The dog is older than the cat" is
# an ordering puzzle (held out, ordering puzzles 94 -> 90 % with them).
_SOCIAL_TERMS = frozenset(
    """feel feeling felt love loved like liked hate hated enjoy enjoyed favourite favorite fun funny
    glad happy sad tired bored boring excited exciting lonely miss missed honestly weekend mood cute
    awesome amazing lovely nice cool great terrible awful weird crazy friends friend family mum mom dad
    boyfriend girlfriend husband wife kids think thought opinion guess hope wish
    gefühl fühle liebe mag hasse spaß lustig froh glücklich traurig müde langweilig aufgeregt
    wochenende freunde freund familie mama papa denke meinung hoffe
    sens aime adore déteste amusant drôle content heureux heureuse triste fatigué fatiguée ennuie
    weekend amis ami famille maman papa pense avis espère
    siento encanta gusta odio divertido feliz triste cansado cansada aburrido emocionado finde amigos
    amigo familia mamá papá pienso opinión ojalá
    sento piace adoro odio divertente felice triste stanco stanca noioso amici amico famiglia mamma
    penso spero
    sinto adoro gosto odeio divertido feliz cansado cansada chato amigos amigo família mãe pai
    acho espero""".split()
)
# Asking for a quantity, a time or a count: "how many", "wie viele", "combien", "cuántos". The word after
# each cue word is looked up (the pairs of the turn are not all built for the pasted text).
_QUANTITY_AFTER = {
    "how": frozenset("many much long far old fast often big tall heavy late early".split()),
    "what": frozenset("time day year age percentage fraction".split()),
    # The same questions in German, French, Spanish, Italian and Portuguese.
    "wie": frozenset("viele viel lange weit alt oft schnell groß schwer spät früh".split()),
    "welcher": frozenset("tag wochentag".split()),
    "welche": frozenset("uhrzeit".split()),
    "quelle": frozenset("heure".split()),
    "quel": frozenset("jour âge pourcentage".split()),
    "qué": frozenset("hora día edad porcentaje".split()),
    "que": frozenset("hora horas día dia idade".split()),
    "che": frozenset("ora giorno".split()),
    "quale": frozenset("giorno percentuale".split()),
    "qual": frozenset("dia idade".split()),
}
_QUANTITY_WORDS = frozenset(
    """combien cuánto cuánta cuántos cuántas cuanto cuantos quanto quanta quanti quante quantos quantas
    wieviel wieviele""".split()
)
_EMOTICONS = (":)", ":(", ":D", ";)", ":P", "<3", ":-)", "^^")
_EMOJI = re.compile("[\U0001f300-\U0001faff\u2600-\u27bf]")
# Patterns that start with a literal character: ``re`` skips to each occurrence of it in C, where a
# pattern that starts with a class (``\d``, ``[a-z]``) is tried at every position, ~10 µs each on a
# 1,600-character window, a quarter of a long turn's 400 µs budget between them (issue 15). Each one
# matches where the plain pattern in its comment would: the look-behind re-reads what came before.
_CLOCK = re.compile(r":(?<=\d:)[0-5]\d")  # \d:[0-5]\d
_AM_PM = re.compile(r"\d ?[ap]\.?m\b", re.IGNORECASE)
_MERIDIEM = frozenset({"am", "pm"})
# \d[/.-]\d{1,2}[/.-]\d, one pattern per first separator.
_DATES = tuple(
    (sep, re.compile(re.escape(sep) + r"(?<=\d" + re.escape(sep) + r")\d{1,2}[/.-]\d")) for sep in "/.-"
)
_ARITHMETIC = re.compile(r"[\d)] ?[-+*×÷^=<>] ?[\d(a-z]")  # noqa: RUF001 (the multiplication sign itself)
# The same on ASCII text, where ``\d`` is [0-9]: a class of ASCII characters is a bitmap test, twice as
# fast as the Unicode digit category at each of the window's positions.
_ARITHMETIC_ASCII = re.compile(r"[0-9)] ?[-+*^=<>] ?[0-9(a-z]")
# Maths notation, each pattern run only when the text holds the character it needs (see _notation).
_LATEX = re.compile(r"\\(?:frac|int|sum|sqrt|lim|begin|mathbb|cdot|le|ge|neq|pi|binom|pmod)\b")
_MATH_SIGNS = tuple("≤≥≠∘π∑∏√∞∫∈∀∃⇒")  # counted with str.count, in C
_POWER = re.compile(r"[a-z0-9)]\^")
_FUNCTION = re.compile(r"\b[fgh]\([a-z0-9]\)")
# [a-z][A-Z], tried only at the capitals (rare in prose) where the plain pattern is tried at every
# lowercase letter; the pairs never overlap, so both count the same.
_CAMEL = re.compile(r"[A-Z](?<=[a-z][A-Z])")
# A capitalised word after a word or a comma on the same line: a name in the middle of a sentence
# ("swaps with Bob, then Claire"). One that opens a sentence or a line is how the sentence starts
# ("Never discuss politics.", "She gives two"): counted as names, a bot's rule list in a system prompt
# read as a puzzle's cast (issue 15). Starts on the space, a literal that ``re`` skips to in C.
_MID_CAPITAL = re.compile(r" (?<=[\w,;)] )([A-ZÀ-ÖØ-Þ][a-zà-öø-ÿ]+)")
_ARITHMETIC_CHARS = "+*=×÷^<>"  # noqa: RUF001
# ^[ \t]*(?:[-*•]|\d{1,2}[.)])[ \t] in multi-line mode, read on "\n" + text.
_LIST_LINE = re.compile(r"\n[ \t]*(?:[-*•]|\d{1,2}[.)])[ \t]")
_CODE_CHARS = ("()", "=>", "::", "&&", "||", "{", "</", "`")
_SENTENCE_ENDS = (". ", "? ", "! ", ".\n")


def _bucket(count: int, edges: tuple[int, ...]) -> str:
    """``count`` as the label of its bucket: edges (1, 2, 4) give 0, 1, 2-3, 4+."""
    previous = 0
    for edge in edges:
        if count < edge:
            return str(previous) if edge - previous == 1 else f"{previous}-{edge - 1}"
        previous = edge
    return f"{previous}+"


_LENGTHS = (40, 100, 250, 600, 1500, 4000)


def _length(chars: int) -> str:
    for edge in _LENGTHS:
        if chars < edge:
            return f"<{edge}"
    return f">={_LENGTHS[-1]}"


def featurize(text: str) -> set[str]:
    """The scorer's features of one piece of text (see the module's docstring)."""
    long = len(text) > HEAD_CHARS + TAIL_CHARS
    window = text[:HEAD_CHARS] + "\n" + text[-TAIL_CHARS:] if long else text
    out: set[str] = set()
    instruction, payload = split_payload(window)
    _structure(instruction, _words(instruction, out), out, "s:")
    if payload:
        # The pasted material has features of its own (p: words, ps: shape): a German article to
        # summarise shares its words and its numbers with German puzzles, and read as one text it
        # scored as a puzzle (issue 15: held out, 2.7 % of German summaries stayed on diffusion).
        out.add("s:payload")
        pfolded = _folded(payload)
        out.update(map("p:".__add__, set(pfolded)))  # each word once: a third of a text's are repeats
        _structure(payload, pfolded, out, "ps:")
    out.add(f"s:len={_length(len(text))}")
    return out


def split_payload(text: str) -> tuple[str, str]:
    """(instruction, payload): a short instruction and the long material it is about, before or after it.

    "Summarise this:\n\n<an email>" or "<a timetable>\n\nWhen do I arrive?"; ``(text, "")`` when the
    text is not so shaped. Two substring searches.
    """
    split = text.find("\n\n")
    # A first paragraph that ends in a comma is a salutation ("Hi Jonas,"), the start of the material.
    if 0 <= split <= 300 and len(text) - split > 2 * max(split, 100) and text[split - 1 : split] != ",":
        return text[:split], text[split + 2 :]
    split = text.rfind("\n\n")
    tail = len(text) - split
    if split > 0 and tail <= 300 and split > 2 * max(tail, 100):
        return text[split + 2 :], text[:split]
    return text, ""


def _folded(text: str) -> list[str]:
    """The lowercased words of ``text``, a number folded into "0": the quantity never makes a request
    harder, its presence may."""
    if text.isascii():
        # An ASCII word starts with a digit exactly when it sorts before ":" (digits are the only word
        # characters below it): a comparison in C, where ``str.isdigit`` is a method call per word.
        return ["0" if t < ":" else t for t in text.translate(_NOT_WORD).lower().split()]
    return ["0" if t[0].isdigit() else t for t in map(str.lower, _TOKEN.findall(text))]


def _words(text: str, out: set[str]) -> list[str]:
    """Adds ``w:`` and ``b:`` features of ``text``; returns its folded words."""
    folded = _folded(text)
    # map() over str methods runs in C: half the time of the same comprehensions (the 400 µs budget).
    out.update(map("w:".__add__, set(folded)))
    # Each pair's string built once: a long turn repeats its pairs (a log, a table, a paste).
    out.update(["b:" + a + " " + b for a, b in set(itertools.pairwise(folded))])
    return folded


def _count_any(text: str, needles: tuple[str, ...]) -> int:
    """``sum(map(text.count, needles))``, counting only the needles whose first character the text
    holds: one character is found by memchr, a two-character needle counted at ~1 ns a character."""
    return sum(text.count(n) for n in needles if n[0] in text)


def _followed_by(words: list[str], cue: str, after: frozenset[str]) -> int:
    """How many times ``cue`` is followed by a word of ``after``. ``list.index`` finds each occurrence
    in C: a map over every word, once per cue, cost 10 µs a cue on a pasted page."""
    count, i = 0, -1
    last = len(words) - 1
    while True:
        try:
            i = words.index(cue, i + 1)
        except ValueError:
            return count
        if i < last and words[i + 1] in after:
            count += 1


def _notation(text: str) -> int:
    count = 0
    if "\\" in text:
        count += len(_LATEX.findall(text))
    if "$$" in text:
        count += 1
    if "^" in text:
        count += len(_POWER.findall(text))
    if "(" in text and ("f(" in text or "g(" in text or "h(" in text):
        count += len(_FUNCTION.findall(text))
    if not text.isascii():
        count += sum(map(text.count, _MATH_SIGNS))
    return count


def _structure(text: str, folded: list[str], into: set[str], prefix: str) -> None:
    """Adds the shape features of ``text``, named ``<prefix><what>``."""
    if prefix == "s:":
        _shape(text, folded, into)
        return
    out: set[str] = set()
    _shape(text, folded, out)
    into.update(prefix + f[2:] for f in out)


def _shape(text: str, folded: list[str], out: set[str]) -> None:
    # List comprehensions, set operations and str methods only: a Python loop with branches per token
    # cost 3x as much.
    distinct = set(folded)
    # C++, C# and F# lose their sign to the word pattern: count them here.
    signed = int("++" in text or ("#" in text and ("C#" in text or "c#" in text or "F#" in text)))
    counts = {
        "code_terms": len(distinct & _CODE_TERMS) + signed,
        "code_verbs": len(distinct & _CODE_VERBS),
        "math_terms": len(distinct & _MATH_TERMS),
        "transform_terms": len(distinct & _TRANSFORM_TERMS),
        # Code or maths at all: a linear model cannot say "code terms OR maths terms" with two counts.
        "domain_terms": len(distinct & _DOMAIN) + signed,
    }
    for name, count in counts.items():
        out.add(f"s:{name}=" + _bucket(count, (1, 2, 4)))
    # The register of chat: exclamations, laughter, emoticons and emoji. Small talk that mentions numbers
    # and names ("slept 5 hours because Priya kept texting") read as a puzzle without it (issue 15:
    # held out, a third of a rambling small-talk source went to the autoregressive backend).
    chatty = text.count("!") + len(distinct & _LAUGHTER) + _count_any(text, _EMOTICONS)
    if not text.isascii():
        chatty += len(_EMOJI.findall(text))
    out.add("s:chatty=" + _bucket(chatty, (1, 2, 4)))
    out.add("s:social_terms=" + _bucket(len(distinct & _SOCIAL_TERMS), (1, 2, 4)))
    quantity = len(distinct & _QUANTITY_WORDS)
    for cue in distinct & _QUANTITY_AFTER.keys():
        quantity += _followed_by(folded, cue, _QUANTITY_AFTER[cue])
    out.add("s:asks_quantity=" + _bucket(quantity, (1, 2)))
    numbers = folded.count("0")
    out.add("s:numbers=" + _bucket(numbers, (1, 2, 4, 7)))
    names = [t for t in set(_MID_CAPITAL.findall(text)) if t.lower() not in _NOT_NAMES]
    if len(names) >= 5 and len(distinct) >= 30 and 4 * len(names) > len(distinct):
        # A quarter of the words capitalised is German nouns, not a cast of characters: a German text
        # to summarise had "s:names=5+", the mark of a puzzle.
        out.add("s:names=dense")
    else:
        out.add("s:names=" + _bucket(len(names), (1, 2, 3, 5)))
    if numbers:
        if numbers * 8 < len(folded):  # a few numbers: find each (see _followed_by)
            units = _followed_by(folded, "0", _UNITS)
        else:  # many: the word after each number, in one pass in C
            after = itertools.compress(folded[1:], map("0".__eq__, folded))
            units = sum(map(_UNITS.__contains__, after))
        out.add("s:with_unit=" + _bucket(units, (1, 2, 3)))
        # Each pattern runs only when the text holds what it needs: a pattern that starts with a digit
        # class is tried at every position, 10-20 µs a pattern on a 1,600-character window.
        if (":" in text and _CLOCK.search(text)) or (distinct & _MERIDIEM and _AM_PM.search(text)):
            out.add("s:clock")
        if ("/" in text or "-" in text or (numbers > 2 and "." in text)) and any(
            sep in text and pattern.search(text) for sep, pattern in _DATES
        ):
            out.add("s:date")
        if any(c in text for c in "$€£¥"):
            out.add("s:money")
        if "%" in text:
            out.add("s:percent")
        if any(c in text for c in _ARITHMETIC_CHARS) or "/" in text:
            arithmetic = len((_ARITHMETIC_ASCII if text.isascii() else _ARITHMETIC).findall(text))
            if arithmetic:
                out.add("s:arithmetic=" + _bucket(arithmetic, (1, 2, 4)))
    notation = _notation(text)
    if notation:
        out.add("s:notation=" + _bucket(notation, (1, 3)))
    questions = text.count("?")
    out.add("s:questions=" + _bucket(questions, (1, 2, 4)))
    if text.rstrip().endswith("?"):
        out.add("s:ends_with_question")
    sentences = _count_any(text, _SENTENCE_ENDS)
    out.add("s:sentences=" + _bucket(sentences, (1, 2, 4, 8, 16)))
    commas = text.count(",")
    out.add("s:commas=" + _bucket(commas, (1, 2, 4, 8)))
    # A short instruction, a paragraph break, then a long payload: "Summarise this:\n\n<an email>".
    if "\n" in text:
        lines = len(_LIST_LINE.findall("\n" + text))
        if lines:
            out.add("s:list=" + _bucket(lines, (1, 3, 6)))
        # Three lines of two commas or more need six commas in all: the lines are read only then.
        if text.count("|") >= 6 or (
            commas >= 6 and sum(line.count(",") >= 2 for line in text.split("\n")) >= 3
        ):
            out.add("s:table")
        out.add("s:paragraphs=" + _bucket(text.count("\n\n") + 1, (1, 2, 4)))
    # camelCase and snake_case identifiers, and the punctuation of code.
    code = len(_CAMEL.findall(text)) + text.count("_") + _count_any(text, _CODE_CHARS)
    if code:
        out.add("s:code=" + _bucket(code, (1, 2, 4)))
