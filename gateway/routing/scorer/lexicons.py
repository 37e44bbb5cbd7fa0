"""The word lists the difficulty scorer counts in a text (``gateway.routing.scorer.text``), several languages.

Each list is a lexicon whose size in a text is a feature (``s:code_terms=2-3``, ``s:social_terms=0``):
a count learned against counter-examples carries over to requests no training source wrote, where single
words say little. Changing a list changes what the shipped model reads: give the feature set a new name
(``vector.FEATURE_SET``), retrain the model (docs/scorer.md, "Retraining on your own traffic") and compare
held out (``gateway router train``'s evaluation, ``bench/routing_ablation.py``).
"""

from __future__ import annotations

__all__ = [
    "CODE_TERMS",
    "CODE_VERBS",
    "DOMAIN",
    "EMOTICONS",
    "LAUGHTER",
    "MATH_TERMS",
    "MERIDIEM",
    "NOT_NAMES",
    "QUANTITY_AFTER",
    "QUANTITY_WORDS",
    "SECOND_PERSON",
    "SOCIAL_TERMS",
    "TRANSFORM_TERMS",
    "UNITS",
]

UNITS = frozenset(
    """km kg mg g m cm mm mi mile miles ft feet foot inch inches yd yard yards lb lbs pound pounds oz ounce
    ounces l ml liter liters litre litres gallon gallons cup cups h hr hrs hour hours min mins minute
    minutes s sec secs second seconds day days week weeks month months year years mph kmh percent degrees
    degree euro euros dollar dollars cent cents people persons person workers students apples items km²
    stunden stunde minuten tage jahre euro heures heure jours ans horas hora minutos días años metros
    kilómetros kilometer meter metres meters""".split()
)
# Words that open a sentence or address the reader: a capitalised one is not a name.
NOT_NAMES = frozenset(
    """the a an i what how why when where who which whose can could would should please is are do does
    did if my in on at for to and or but so then now also yes no hi hello hey thanks thank ok okay this
    that these those it its we you your our they there here let give tell write make explain describe
    summarise summarize translate list find show help create draft rewrite plan is was be""".split()
)
# Domain lexicons, several languages: how many distinct words of each a text uses is a feature
# (s:code_terms=2-3). Single words say little (a "library" may hold books), but a count learned against
# counter-examples transfers to requests no training source wrote: a held-out source of code requests
# shares few words with the others, and almost always two or more of these.
CODE_TERMS = frozenset(
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
CODE_VERBS = frozenset(
    """write implement refactor debug fix optimise optimize port rewrite parallelise parallelize deploy
    compile profile vectorise vectorize code program script automate benchmark test""".split()
)
# The English list, then the same list translated into the languages the generators write (de, fr, es,
# it, pt), term by term, leaving out translations that are everyday words ("rapport", "prueba", "razón",
# "rayon", "radio", "Reihe", "Kreis"; "serie", which is a TV series and would send "¿Qué serie me
# recomiendas?" to the autoregressive backend): a maths request in German should count its terms as
# one in English does.
MATH_TERMS = frozenset(
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
TRANSFORM_TERMS = frozenset(
    """summarise summarize summary summarising summarizing tldr translate translation translating rewrite
    rephrase paraphrase proofread shorten condense reformat reword polish bullet bullets outline
    extract list
    zusammenfassen zusammenfassung fasse übersetze übersetzen übersetzung umformulieren formuliere
    korrigiere kürze résume résumer résumé traduis traduire traduction reformule reformuler corrige
    raccourcis resume resumir resumen traduce traducir traducción reescribe reformula corrige acorta
    riassumi riassunto traduci traduzione riformula resuma traduza reescreva""".split()
)
DOMAIN = CODE_TERMS | MATH_TERMS
MERIDIEM = frozenset({"am", "pm"})  # "7 pm": the words that make a clock time of a number
LAUGHTER = frozenset("haha hahaha hehe lol lmao omg xd xx yay ugh wow aww hmm jaja mdr".split())
# Words of feeling, opinion and company, several languages: small talk is about how the speaker or the
# listener is and what they like, a task about something to work out. A count pooled over languages
# carries what English sources teach to a Spanish chat. No pets: "The dog is older than the cat" is
# an ordering puzzle, and with pets in the list ordering puzzles read as small talk.
SOCIAL_TERMS = frozenset(
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
# The listener, in the six languages: a closing question that holds one asks about the bot ("How was
# yours?", "Any plans yourself?", "¿Y tú?"), a word problem's asks about its figures. Words that are
# also something else are left out: "ton" and "ta" (English), "ihr" and "sie" (her, she), "seu" (his).
SECOND_PERSON = frozenset(
    """you your yours yourself yourselves
    du dich dir dein deine deinen deinem deiner deines euch euer eure
    tu toi vous votre vos tes te
    tú usted ustedes vosotros vosotras vuestro vuestra ti tus
    tuo tua tuoi tue voi vostro vostra
    você vocês teu teus tuas""".split()
)
# Asking for a quantity, a time or a count: "how many", "wie viele", "combien", "cuántos". The word after
# each cue word is looked up (the pairs of the turn are not all built for the pasted text).
QUANTITY_AFTER = {
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
QUANTITY_WORDS = frozenset(
    """combien cuánto cuánta cuántos cuántas cuanto cuantos quanto quanta quanti quante quantos quantas
    wieviel wieviele""".split()
)
EMOTICONS = (":)", ":(", ":D", ";)", ":P", "<3", ":-)", "^^")
