"""The sensitive backstop's wider reach: recovery and addiction, organ donation, criminal records, immigration
status, gender identity, trade-union membership, genetic and biometric data, and details inside longer facts; while
jobs, studies, hobbies, things and other people's matters that borrow the words stay ordinary. Error rates on
labelled corpora: `bench/gate_corpora.py`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.memory.pipeline.extractor import EXTRACTION_SYSTEM_PROMPT
from bot.memory.rules.sensitive import (
    CATEGORIES,
    FINANCES,
    HEALTH,
    POLITICS,
    RELIGION,
    SEX_LIFE,
    _scan,
    categories_in,
    marked_category,
    pattern_categories,
)
from bot.memory.rules.sensitive_special import (
    BIOMETRIC,
    CRIMINAL_RECORD,
    GENDER_IDENTITY,
    GENETIC,
    IMMIGRATION,
    ORGAN_DONATION,
    RECOVERY,
    TRADE_UNION,
)
from bot.memory.rules.withhold import NO_REQUESTS, Requests, fact_withheld


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("Goes to Narcotics Anonymous every Wednesday", RECOVERY),
        ("Picks up methadone from the pharmacy before work", RECOVERY),
        ("Builds furniture and has been off heroin for two years", RECOVERY),
        ("Is a registered organ donor", ORGAN_DONATION),
        ("Has been on the transplant list for a new lung since May", ORGAN_DONATION),
        ("Runs a food truck and had a kidney transplant in 2018", ORGAN_DONATION),
        ("Served three years in prison for robbery", CRIMINAL_RECORD),
        ("Sees their probation officer on Mondays", CRIMINAL_RECORD),
        ("Paints murals and has a pending assault charge", CRIMINAL_RECORD),
        ("Is waiting for a decision on their asylum claim", IMMIGRATION),
        ("Is in Canada on a work permit that expires in June", IMMIGRATION),
        ("Teaches piano in Leeds on a student visa", IMMIGRATION),
        ("Is a trans woman", GENDER_IDENTITY),
        ("Started testosterone last spring", GENDER_IDENTITY),
        ("Has their first appointment at the gender identity clinic in May", GENDER_IDENTITY),
        ("Is the union rep at the bus depot", TRADE_UNION),
        ("Drives trams and is a Unite member", TRADE_UNION),
        ("Ist Mitglied der Gewerkschaft ver.di", TRADE_UNION),
        ("Carries the BRCA2 mutation", GENETIC),
        ("A DNA test showed they carry a gene variant linked to early Alzheimer's", GENETIC),
        ("Registered their fingerprints with the border agency", BIOMETRIC),
        ("Enrolled a voiceprint for telephone banking", BIOMETRIC),
        ("Works night shifts as a nurse in Dublin while pregnant", HEALTH),
        ("Is a teacher who goes to synagogue every Saturday", RELIGION),
        ("Arbeitet in Köln und ist schwanger", HEALTH),
        ("Is a recovering cocaine addict", HEALTH),
        ("Calls their sponsor whenever a relapse feels close", RECOVERY),
        ("Ist Alkoholiker und arbeitet in Bremen", RECOVERY),
        ("Teaches chemistry in Porto with her wife", SEX_LIFE),
        ("Is a man and lives with his boyfriend in Ghent", SEX_LIFE),
        ("Skips bread because of a wheat allergy", HEALTH),
        # other languages: a frame of one language and a term from the shared vocabulary
        ("Padece de migrañas crónicas", HEALTH),
        ("A une sclérose en plaques", HEALTH),
        ("Leidet an Depressionen", HEALTH),
        ("Ha il diabete di tipo 1", HEALTH),
        ("Sofre de depressão", HEALTH),
        ("Ma cukrzycę", HEALTH),
        ("У неё диабет", HEALTH),
        ("Diyabet hastası", HEALTH),
        ("Prend des antidépresseurs", HEALTH),
        ("得了抑郁症", HEALTH),
        ("우울증 진단을 받았다", HEALTH),
        ("Is homoseksueel", SEX_LIFE),
        ("Jest gejem", SEX_LIFE),
        ("Es una mujer trans", GENDER_IDENTITY),
        ("Ist gläubige Muslimin", RELIGION),
        ("Ist Mitglied der SPD", POLITICS),
        ("Vota no PT", POLITICS),
        ("Touche le RSA", FINANCES),
        ("Ist verschuldet", FINANCES),
        ("Hat eine Vorstrafe wegen Diebstahls", CRIMINAL_RECORD),
        ("Ist Flüchtling aus Syrien", IMMIGRATION),
        # indirect and compound English wordings, from broad vocabularies
        ("Runs a bakery in Hull and has MS", HEALTH),
        ("Coaches netball and takes methotrexate for rheumatoid arthritis", HEALTH),
        ("Was diagnosed with a rare blood disorder", HEALTH),
        ("Had top surgery last spring", HEALTH),
        ("Sings in a gay men's chorus", SEX_LIFE),
        ("Volunteers for the Liberal Democrats", POLITICS),
        ("Donated to Obama's re-election campaign", POLITICS),
        ("Has a caution for possession of cannabis", CRIMINAL_RECORD),
        ("Did two years for fraud", CRIMINAL_RECORD),
        ("Got a 30-day chip at AA", RECOVERY),
        ("Gave a kidney to their brother", ORGAN_DONATION),
        ("Their genetic test found the BRCA2 variant", GENETIC),
        ("Their iris scan is stored by the border agency", BIOMETRIC),
        ("Came to the UK as a refugee", IMMIGRATION),
        ("Holds a Skilled Worker visa", IMMIGRATION),
        ("Is in the Teamsters", TRADE_UNION),
        # families of wordings: each stands for a vocabulary, not one sentence
        ("Is sixteen weeks along with their first", HEALTH),
        ("Had the dating scan on Friday", HEALTH),
        ("Wears an insulin pump under their shirt", HEALTH),
        ("Was referred to the pain clinic last month", HEALTH),
        ("Has been on a waiting list for a dyslexia assessment since January", HEALTH),
        ("Came out as ace to their friends", SEX_LIFE),
        ("Goes by they/them at work", GENDER_IDENTITY),
        ("Worships at a mandir in Leicester", RELIGION),
        ("Describes themself as a trotskyist", POLITICS),
        ("Marched with Fridays for Future in Berlin", POLITICS),
        ("Is the health and safety rep for the CWU", TRADE_UNION),
        ("Did eighteen months in a juvenile detention centre", CRIMINAL_RECORD),
        ("Pleaded guilty to affray in 2019", CRIMINAL_RECORD),
        ("Has their naturalisation ceremony booked", IMMIGRATION),
        ("Has been sober from pills for a year", RECOVERY),
        ("Tested positive for the Lynch syndrome variant", GENETIC),
        ("Their gym stores a template of their palm for entry", BIOMETRIC),
        ("Has two CCJs from their twenties", FINANCES),
        ("Es afiliada de la CGT desde 2015", TRADE_UNION),
        ("Has been in Unite for thirty years", TRADE_UNION),
        ("Out with the RMT again this week", TRADE_UNION),
        ("Has a union meeting tonight about the pay offer", TRADE_UNION),
        ("Is trying to unionise the coffee shop", TRADE_UNION),
        ("User is a librarian who is on strike with her union", TRADE_UNION),
        ("Tem uma autorização pendente e um pedido de asilo", IMMIGRATION),
        ("Frecuenta la iglesia evangélica del barrio", RELIGION),
        ("Hatte einen Gentest und ist Träger einer BRCA-Mutation", GENETIC),
    ],
)
def test_what_the_user_says_about_themselves_is_caught(text: str, category: str) -> None:
    assert category in categories_in(text)


@pytest.mark.parametrize(
    "text",
    [
        "Works as an immigration lawyer in Leeds",
        "Plays rugby union on Sundays",
        "Transplanted the basil into a bigger pot",
        "Is a prison officer at a young offenders' unit",
        "Uses Face ID to unlock their phone",
        "Works on fingerprint sensors at a hardware startup",
        "Studies genetics at Oxford",
        "Their brother is on parole",
        "Switched to Linux and calls it their transition era",
        "Donated their old bike to a charity shop",
        "Plays a Hammond organ in a blues band",
        "Works on diabetes research software",
        "Loves the true-crime podcast Serial",
        "Commutes through Union Station",
        "Is reading a book about the history of Narcotics Anonymous",
        "Watched a documentary on the prison system",
        "Is sober-minded about investing",
        "Has a sponsor for the charity marathon",
        "Met his wife at a folk festival",
        "Cancelled the trip because of covid",
        "Trabaja como enfermera en un hospital de cáncer",
        "Es conservador de museo en Madrid",
        "Ist Rechtsanwalt in München",
        "Arbeitet als Bewährungshelferin in Köln",
        "Enseña español a refugiados en Valencia",
        "Aide les demandeurs d'asile à remplir leurs papiers",
        "Hat ein Handicap von 12 beim Golf",
        "Tiene un blog sobre diabetes tipo 1",
        "Su madre tiene cáncer",
        "Ma mère a le diabète",
        "Tem um cão com diabetes",
        "在医院做护士",
        "ゲームをスイッチに移植した",
        "Is Christmas-obsessed and decorates early",
        "Works as a probation officer",
        "Works with children with Down syndrome",
        "Has imposter syndrome about the new job",
        "Joined the credit union at work",
        "Teaches English to asylum seekers",
        "Is a refugee caseworker at the council",
        "Is applying for a visa to visit Vietnam on holiday",
        "Did time trials on the bike last weekend",
        "Works for the AA as a patrol",
        "Loves the musical Kinky Boots",
        "Donated to the Movember campaign",
        "Volunteers at the food bank on Saturdays",
        "Is a pharmacist who dispenses methadone",
        "Works at the immigration tribunal as a clerk",
        "Photographs Extinction Rebellion protests for a news agency",
        "Teaches a module on immigration policy",
        "Wrote a dissertation on eating disorders in fashion",
        "The paint has been dry for hours",
        "Is expecting a parcel from Amazon",
        "Is the branch secretary of the local book club",
        "Arbeitet bei der IG Metall als Pressesprecherin",
        "Got a caution from the referee for time-wasting",
        "My sister runs a ceramics studio and I help her glaze pots on Sundays",  # an acronym only in capitals
        "I help her add up the bills every month",
        "Read an article about unionisation at Amazon",
        "Their union was blessed in June",
        "Is in equity research at Barclays",
        "Had a prospect meeting with a new client",
        "Helped write a report on unionisation in retail",
        "Reported on the protests in Hong Kong",
        "Works against immigration fraud as a lawyer",
        "Cracks her neck when stressed",
        "Twisted my arm into coming to the party",
    ],
)
def test_the_patterns_leave_look_alikes_alone(text: str) -> None:
    """The patterns only; the trained reader beside them takes a few look-alikes ("Joined the credit union at work",
    "Es conservador de museo en Madrid"): its rate is measured on labelled sets (`python -m bench.gate_corpora`)."""
    assert pattern_categories(text) == frozenset()


@pytest.mark.parametrize("text", ["Has POTS and gets dizzy standing up", "Was diagnosed with EDS", "Has ADD"])
def test_acronyms_that_are_words_count_in_capitals(text: str) -> None:
    assert categories_in(text) == {HEALTH}


def test_the_models_mark_names_the_new_categories() -> None:
    assert marked_category("criminal record") == CRIMINAL_RECORD
    assert marked_category("Immigration status") == IMMIGRATION
    assert marked_category("trade_union") == TRADE_UNION
    assert marked_category("gender identity") == GENDER_IDENTITY


def test_a_new_category_is_kept_only_when_asked() -> None:
    fact = "Is on probation until March"
    assert fact_withheld(fact, None, NO_REQUESTS) == CRIMINAL_RECORD
    asked = Requests(("I'm on probation until March, please remember it",))
    assert fact_withheld(fact, None, asked) is None


def test_the_word_gate_skips_no_pattern_that_would_match() -> None:
    """The backstop runs a category's patterns only when the text has one of their words: on the held-out set,
    that gives what running every pattern gives."""
    path = Path(__file__).resolve().parents[2] / "bench" / "corpora" / "gates" / "sensitive_heldout.jsonl"
    texts = [json.loads(line)["text"] for line in path.read_text("utf-8").splitlines() if line.strip()]
    assert len(texts) > 100
    assert [pattern_categories(text) for text in texts] == [_scan(text, triggers=False) for text in texts]


@pytest.mark.parametrize(
    "text",
    ["Hat Multiple Sklerose", "Es militante de Podemos", "Ist asexuell", "Bezieht Buergergeld", "Tiene diabetes tipo 2",
     "Is homoseksueel", "Got a 30-day chip at AA", "Sings in a gay men's chorus", "Trabaja como enfermera",
     "Is on Jobseeker's Allowance", "Fährt gern Rennrad und hat Typ-2-Diabetes",
     "Attend la réponse de l'OFPRA depuis huit mois", "Il ginecologo dice che ho l'endometriosi"],
)
def test_the_word_gate_reads_other_languages_and_new_wordings(text: str) -> None:
    """Other-language frames and the indirect wordings pass the same word gate: it skips only what cannot match."""
    assert categories_in(text) == _scan(text, triggers=False)


def test_every_pattern_has_a_trigger_word() -> None:
    """A vocabulary fragment with no certain literal word makes its category run on every text; none may."""
    from bot.memory.rules import sensitive

    needed = [*sensitive._TRIGGER_WORDS.values(), *sensitive._SPECIAL_NEEDED, *sensitive._LANGUAGE_NEEDED]
    assert all("" not in words for words in needed)


def test_the_extraction_prompt_asks_for_every_category_by_the_name_the_mark_reads() -> None:
    for category in CATEGORIES:
        assert f'"{category}"' in EXTRACTION_SYSTEM_PROMPT
        assert marked_category(category) == category


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("has the implant fitted now, thinking about switching to the mini pill though", SEX_LIFE),
        ("Is on the Depo shot and hates the side effects", SEX_LIFE),
        ("finally told my best mate i'm into guys too lol", SEX_LIFE),
        ("Rides a Brompton to work, is a practising Jew, and bakes challah on Fridays.", RELIGION),
        ("honestly stopped believing in god around uni and never went back", RELIGION),
        ("Says the rosary with her grandmother's beads every night.", RELIGION),
        ("Leafleted the whole estate for our candidate before the council vote.", POLITICS),
        ("Helped organise the student walkout against the tuition rise.", POLITICS),
        ("Went to a protest outside parliament about the new bill.", POLITICS),
        ("dropped like 800 quid on the slots last night, gutted", FINANCES),
        ("Mentioned she's on £19k and can't save anything.", FINANCES),
        ("texted my sponsor from the car park instead of going in to the pub", RECOVERY),
        ("Is the branch secretary for our union at the depot.", TRADE_UNION),
        ("Walked out with the bus drivers on Monday over pay.", TRADE_UNION),
        ("Got knocked back for a school job because of a failed DBS check.", CRIMINAL_RECORD),
        ("spent the whole weekend in a police cell after the match", CRIMINAL_RECORD),
        ("Has signed up to donate his organs after he dies.", ORGAN_DONATION),
        ("Has moved up the waiting list for a new kidney.", ORGAN_DONATION),
        ("The lab says she's heterozygous for the Factor V Leiden mutation.", GENETIC),
        ("Results from the DNA test came in and apparently she has a brother in Texas.", GENETIC),
        ("The border kiosk scanned both thumbs and kept them on record.", BIOMETRIC),
        ("Her bank recorded her face to verify it is her when she logs in from abroad.", BIOMETRIC),
        ("Has a hysterectomy scheduled for the spring.", HEALTH),
        ("my psychiatrist wants to try a new dose next month", HEALTH),
        ("Woont in Gent en is homo.", SEX_LIFE),
        ("Ogni sera prende la pillola e dimentica sempre l'orario.", HEALTH),
        ("sono 40 giorni sobria e me ne vanto", RECOVERY),
        ("my boss keeps asking about my 'wife', i'm gay, greg", SEX_LIFE),
        ("Mei described herself as asexual.", SEX_LIFE),
        ("Tomasz is a plumber in Cardiff who goes to Gamblers Anonymous on Thursdays.", RECOVERY),
        ("Spent Saturday at an anti-war rally in Glasgow.", POLITICS),
        ("Stood as a Green council candidate last May.", POLITICS),
        ("has been pawning her jewellery to cover the rent", FINANCES),
        ("His hours were cut and he has zero savings left.", FINANCES),
        ("His record for shoplifting still shows up on checks.", CRIMINAL_RECORD),
        ("A genetic test found a pathogenic variant in the BRCA2 gene.", GENETIC),
        ("Enrolled in the palm scanner system at her gym last month.", BIOMETRIC),
        ("Has lived full-time as a woman since 2019.", GENDER_IDENTITY),
        ("Developed a peanut allergy in her twenties.", HEALTH),
        ("Says she and her husband are trying for a baby this year.", SEX_LIFE),  # the user and theirs as one
        ("Mechanic in Bristol who identifies as non-binary and restores vespas.", GENDER_IDENTITY),
        ("Builds furniture, plays darts, sits on the Unite branch committee.", TRADE_UNION),
        ("i only eat halal so can we pick somewhere else", RELIGION),
        ("Marched in the teachers' strike on Thursday.", POLITICS),
        ("Has been putting the weekly shop on Klarna since October.", FINANCES),
        ("Claims universal credit while she looks for work.", FINANCES),
        ("finished a two-year sentence for burglary last spring", CRIMINAL_RECORD),
        ("Has a confirmed MLH1 mutation.", GENETIC),
        ("Clocks in by putting his palm on a scanner at the depot.", BIOMETRIC),
        ("going by Sam now, new name who dis", GENDER_IDENTITY),
        ("i've been using again. please don't tell my mum", RECOVERY),
    ],
)
def test_what_people_say_without_the_categories_nouns_is_caught(text: str, category: str) -> None:
    assert category in pattern_categories(text)


@pytest.mark.parametrize(
    "text",
    [
        "shipping the release on friday night, pray for me",
        "Their cat Miso, a ten-year-old tabby, had surgery on her jaw last week.",  # a comma that closes an apposition
        "told my sister she has to see the new Dune film",
        "Is a transplant coordinator at the children's hospital.",
        "Wore a party hat at her niece's birthday.",
        "The vault opens with the key under the mat.",
        "Bought a signed photo of a Formula 1 driver at the auction.",
        "Signed the birthday card for his manager.",
        "Lost two grand of value on her car when she sold it.",
        "Breeds Bengal cats and has them tested for the PKD gene.",
        "Pays with Face ID on her iPhone everywhere.",
        "Their gym, a converted warehouse, has a climbing wall.",
        "He and his brother, who has asthma, run a bike shop.",
        "Started using Notion again for work notes.",
        "Reads the scripts for the school play every night.",
    ],
)
def test_the_new_wordings_leave_look_alikes_alone(text: str) -> None:
    assert pattern_categories(text) == frozenset()
