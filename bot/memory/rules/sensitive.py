"""Sensitive categories: health, sex life, religion, politics, finances and the categories of
`bot.memory.rules.sensitive_special` (recovery and addiction, organ donation, criminal record, immigration status,
gender identity, trade-union membership, genetic and biometric data) are kept only when the user asks.

Three pure parts, used together by the apply step:
- `marked_category` reads the extraction model's optional `"sensitive"` mark on a new fact, however a model writes
  it ("health", "Medical", "sexual orientation", true, null);
- `category_of` is the code backstop for what the model forgot to mark, and for summary sentences (summaries carry
  no mark): patterns about the user's own condition, orientation, faith, vote or money ("Has type 1 diabetes",
  "Came out as bisexual", "Votes Labour", "Has $40k in student debt"), not the words alone, so jobs, hobbies and
  other people stay ("Works as a nurse", "Follows politics podcasts", "Is a bank teller", "Their cat has diabetes");
- `Requests` (in `bot.memory.consent`) says which sensitive facts the user asked to keep.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from bot.memory.rules.sensitive_languages import (
    CJK_NOT_ABOUT_THEM,
    CJK_PATTERNS,
    LANGUAGE_PATTERNS,
    OTHER_PEOPLE,
    TOPIC,
)
from bot.memory.rules.sensitive_reader import reads_as_sensitive
from bot.memory.rules.sensitive_special import (
    FINANCES,
    HEALTH,
    MONEY,
    POLITICS,
    RELIGION,
    SEX_LIFE,
    SPECIAL_CATEGORIES,
    SPECIAL_MARK_WORDS,
    SPECIAL_PATTERNS,
)

CATEGORIES = (HEALTH, SEX_LIFE, RELIGION, POLITICS, FINANCES, *SPECIAL_CATEGORIES)

# --- the model's mark -----------------------------------------------------------------------------------------

_MARK_WORDS: dict[str, str] = {
    **dict.fromkeys(
        ("health", "medical", "mental health", "physical health", "medication", "disability", "illness", "condition",
         "diagnosis", "pregnancy", "addiction", "wellbeing"), HEALTH),
    **dict.fromkeys(
        ("sex life", "sex", "sexual", "sexuality", "sexual orientation", "orientation", "lgbt", "lgbtq", "lgbtq+",
         "gender identity", "sex_life", "sexlife", "sexual life", "intimacy", "relationship style"), SEX_LIFE),
    **dict.fromkeys(
        ("religion", "religious", "faith", "belief", "beliefs", "religious beliefs", "spirituality", "church"),
        RELIGION),
    **dict.fromkeys(
        ("politics", "political", "political views", "political opinion", "political opinions", "vote", "voting",
         "party", "ideology"), POLITICS),
    **dict.fromkeys(
        ("finances", "finance", "financial", "money", "income", "salary", "debt", "debts", "wealth", "savings",
         "financial situation"), FINANCES),
}
_MARK_WORDS.update(SPECIAL_MARK_WORDS)  # "gender identity" names its own category now, not sex life
SENSITIVE_UNSPECIFIED = "sensitive"  # marked, but with no category we know ("true", "yes", "other")
_NOT_MARKED = frozenset({"", "false", "no", "none", "null", "n/a", "na", "0", "not sensitive", "nonsensitive"})


def marked_category(value: Any) -> str | None:
    """The category a model's `"sensitive"` mark names, `SENSITIVE_UNSPECIFIED` for a bare yes, None for no mark.

    Tolerant: case, spaces, underscores and plurals are ignored; a list takes its first category; anything else
    that is not a clear "no" counts as a mark (when in doubt, the user is asked, not the fact kept)."""
    if value is None or value is False:
        return None
    if value is True:
        return SENSITIVE_UNSPECIFIED
    if isinstance(value, list | tuple):
        marks = [mark for mark in (marked_category(item) for item in value) if mark is not None]
        return next((mark for mark in marks if mark != SENSITIVE_UNSPECIFIED), marks[0] if marks else None)
    if isinstance(value, int | float):
        return SENSITIVE_UNSPECIFIED if value else None
    text = " ".join(str(value).replace("_", " ").replace("-", " ").strip().lower().split())
    if text in _NOT_MARKED or re.match(r"(?:no|none|not|non)\b", text):
        return None
    if text in _MARK_WORDS:
        return _MARK_WORDS[text]
    for word, category in _MARK_WORDS.items():
        if word in text.split() or (len(word) > 4 and word in text):
            return category
    return SENSITIVE_UNSPECIFIED


# --- the backstop -----------------------------------------------------------------------------------------

_FLAGS = re.IGNORECASE


def _any(*words: str) -> str:
    return "(?:" + "|".join(words) + ")"


_CONDITION = _any(
    r"diabetes", r"cancer", r"leuka?emia", r"lymphoma", r"tumou?rs?", r"depression", r"depressive episodes?",
    r"anxiety(?: disorder)?", r"panic (?:attacks?|disorder)", r"adhd", r"(?-i:ADD)", r"autism", r"asperger'?s",
    r"bipolar(?: disorder)?", r"schizophrenia", r"ptsd", r"c-ptsd", r"ocd", r"hiv", r"(?-i:AIDS)", r"hepatitis \w",
    r"asthma",
    r"epilepsy", r"seizures", r"migraines?", r"crohn'?s(?: disease)?", r"colitis", r"ibs",
    r"celiac(?: disease)?", r"coeliac(?: disease)?",
    r"arthritis", r"lupus", r"multiple sclerosis", r"fibromyalgia", r"endometriosis", r"pcos", r"eating disorders?",
    r"anorexia", r"bulimia", r"insomnia", r"sleep apnea", r"long covid", r"covid",
    r"heart (?:condition|disease|failure)",
    r"high blood pressure", r"hypertension", r"chronic (?:pain|illness|fatigue)", r"disabilit(?:y|ies)",
    r"dyslexia", r"tinnitus", r"allerg(?:y|ies)", r"addictions?", r"alcoholism", r"alcohol", r"drinking",
    r"drugs", r"opioids", r"gambling", r"concussion", r"a stroke", r"miscarriages?", r"infertility",
    r"erectile dysfunction", r"stds?", r"stis?", r"herpes", r"dementia", r"alzheimer'?s", r"parkinson'?s",
    r"burnout", r"mental illness", r"mental health (?:issues|problems|struggles)", r"psychosis", r"self-harm",
    r"suicidal thoughts", r"cystic fibrosis", r"sickle cell", r"thyroid \w+", r"hypothyroidism", r"kidney disease",
    r"liver disease", r"copd", r"scoliosis", r"(?:spinal|brain|knee|back) injur(?:y|ies)", r"a disorder",
    r"an illness", r"a (?:medical|chronic|heart|skin) condition", r"a disease", r"pneumonia", r"tuberculosis",
    r"a heart attack", r"(?=(?-i:MS))ms(?!\s+(?:office|teams|word|excel|paint|access|dos|sql)\b)", r"osteoarthritis",
    r"rheumatoid arthritis", r"psoriasis", r"psoriatic arthritis", r"eczema", r"rosacea", r"vitiligo", r"alopecia",
    r"anaemia", r"anemia", r"osteoporosis", r"gout", r"gerd", r"acid reflux", r"gallstones", r"kidney stones",
    r"glaucoma", r"cataracts", r"macular degeneration", r"hearing loss", r"vertigo", r"meniere'?s(?: disease)?",
    r"narcolepsy", r"restless legs(?: syndrome)?", r"sciatica", r"a hernia", r"a (?:slipped|herniated|bulging) disc",
    r"chronic fatigue syndrome", r"(?-i:POTS)", r"ehlers-danlos(?: syndrome)?", r"(?-i:EDS)", r"hypermobility",
    r"marfan(?: syndrome)?", r"cerebral palsy", r"spina bifida", r"muscular dystrophy", r"als",
    r"motor neu?rone disease", r"huntington'?s(?: disease)?", r"down'?s? syndrome", r"tourette'?s(?: syndrome)?",
    r"a stutter", r"a stammer", r"bpd", r"borderline personality disorder", r"(?:a )?personality disorder",
    r"agoraphobia", r"social anxiety", r"(?:post-?natal|post-?partum) depression", r"seasonal affective disorder",
    r"haemophilia", r"hemophilia", r"thalassa?emia", r"shingles", r"lyme disease", r"melanoma", r"sarcoma", r"myeloma",
    r"carcinoma", r"glioblastoma", r"mesothelioma", r"angina", r"arrhythmia", r"atrial fibrillation", r"afib",
    r"a heart murmur", r"cardiomyopathy", r"high cholesterol", r"prediabetes", r"pre-diabetes", r"obesity",
    r"adenomyosis", r"fibroids", r"menopause", r"perimenopause", r"gestational diabetes", r"pre-eclampsia",
    r"preeclampsia",
    r"incontinence", r"diverticulitis", r"pancreatitis", r"cirrhosis", r"fatty liver(?: disease)?",
    r"kidney failure", r"ckd", r"gastroparesis", r"cluster headaches", r"dyspraxia", r"dyscalculia", r"aphasia",
    r"sepsis", r"meningitis", r"an aneurysm", r"blood clots?", r"dvt", r"a pulmonary embolism", r"emphysema",
    r"bronchiectasis", r"sjogren'?s(?: syndrome)?", r"sjögren'?s(?: syndrome)?", r"sarcoidosis", r"scleroderma",
    r"myasthenia gravis",
    r"neuropathy", r"trigeminal neuralgia", r"bell'?s palsy", r"hashimoto'?s(?: disease)?",
    r"graves'?(?: disease)?", r"addison'?s(?: disease)?", r"cushing'?s(?: syndrome| disease)?", r"hyperthyroidism",
    r"lymphoe?dema", r"chlamydia", r"gonorrh?o?ea", r"syphilis", r"hpv", r"body dysmorphia",
    r"(?:a|an) (?:rare|genetic|inherited|autoimmune|neurological|chronic|heart|lung|kidney|liver|bowel|blood|skin"
    r"|eye|bone|joint|thyroid|mental health|sleep|eating|anxiety|mood|seizure|movement|heart rhythm|muscle|nerve"
    r"|immune|metabolic|digestive|hormonal|progressive|degenerative|serious)\s+(?:[\w-]+\s+)?"
    r"(?:condition|disease|disorder|syndrome|deficiency|impairment)",
    r"[\w-]+ (?:deficiency|syndrome)(?<!imposter syndrome)(?<!impostor syndrome)", r"[\w-]+ disorder",
)
_NOT_ABOUT_THEM = (  # "diabetes research", "a cancer charity": the condition names someone else's work
    r"(?!\s+(?:research|charity|charities|apps?|software|awareness|foundation|institute|society|ward|unit|cent(?:er|re)"
    r"|stud(?:y|ies)|trials?|nurses?|doctors?|specialists?|researchers?|patients|hotline|prevention|fundrais\w*"
    r"|walk|run|campaign|clinic|screening|team|department)\b)"
)
_HAVING = (
    r"(?:has|have|had|having|got|gets|with|liv(?:e|es|ing) with|suffer(?:s|ing|ed)? (?:from|with)|"
    r"(?:was |were |got |been |being |is |are )?diagnosed with|battl(?:e|es|ing|ed)|fight(?:s|ing)?|"
    r"recover(?:s|ing|ed)? from|(?:being |was |is )?treated for|treatment for|struggl(?:e|es|ing|ed) with|"
    r"deal(?:s|ing|t)? with|manag(?:e|es|ing|ed)|in remission from|survived|survivor of|cop(?:e|es|ing|ed) with|"
    r"develop(?:s|ed|ing)|"
    r"addicted to|(?:their|his|her|my))"
)
_DEGREE = (
    r"(?:(?:a|an|the|their|his|her|my|mild|severe|chronic|type [12]|stage \w+|some|bad|clinical|major|social|"
    r"generali[sz]ed|post-?partum|early-onset|terminal|rare|serious|acute|long-term|lifelong|severe)\s+){0,3}"
)
_STATE = _any(
    r"diabetic", r"epileptic", r"asthmatic", r"autistic", r"bipolar", r"anorexic", r"bulimic", r"schizophrenic",
    r"(?:clinically )?depressed", r"dyslexic", r"dyspraxic", r"deaf", r"blind", r"hard of hearing", r"disabled",
    r"pregnant", r"infertile", r"hiv[- ]positive", r"in remission", r"sober(?![\w-])", r"in recovery",
    r"(?:a )?recovering (?:[\w-]+ ){0,2}?(?:alcoholic|addict)", r"an? (?:alcoholic|addict)", r"neurodivergent",
    r"on the (?:autism )?spectrum", r"immunocompromised", r"chronically ill", r"terminally ill", r"allergic to",
    r"lactose intolerant", r"paraly[sz]ed", r"in a wheelchair", r"suicidal", r"hospitali[sz]ed", r"in rehab",
    r"in therapy", r"on (?:antidepressants|medication|meds)", r"(?:\w+ )?months pregnant", r"expecting a baby",
    r"clean from \w+", r"going through ivf",
)
_MEDICINE = _any(
    r"insulin", r"antidepressants?", r"ssris?", r"sertraline", r"zoloft", r"prozac", r"lexapro", r"fluoxetine",
    r"escitalopram", r"citalopram", r"venlafaxine", r"bupropion", r"wellbutrin", r"xanax", r"valium",
    r"benzodiazepines?", r"adderall", r"ritalin", r"concerta", r"vyvanse", r"methylphenidate", r"lithium",
    r"metformin", r"ozempic", r"semaglutide", r"chemo(?:therapy)?", r"hrt", r"hormone (?:therapy|replacement)",
    r"antipsychotics?", r"prep", r"methadone", r"suboxone", r"dialysis", r"an? inhaler", r"inhalers", r"epipens?",
    r"medication", r"meds", r"painkillers", r"oxycodone", r"birth control", r"the pill(?![- ]?box)", r"testosterone",
    r"estrogen", r"oestrogen", r"blood thinners", r"beta blockers", r"statins", r"radiation(?: therapy)?",
    r"radiotherapy", r"levothyroxine", r"synthroid", r"thyroxine", r"atorvastatin", r"lipitor", r"simvastatin",
    r"rosuvastatin", r"amlodipine", r"lisinopril", r"ramipril", r"losartan", r"metoprolol", r"propranolol",
    r"bisoprolol", r"warfarin", r"eliquis", r"apixaban", r"xarelto", r"rivaroxaban", r"clopidogrel", r"omeprazole",
    r"lansoprazole", r"pantoprazole", r"gabapentin", r"pregabalin", r"lyrica", r"tramadol", r"codeine", r"morphine",
    r"fentanyl", r"prednisone", r"prednisolone", r"steroids", r"methotrexate", r"humira", r"adalimumab",
    r"hydroxychloroquine", r"plaquenil", r"allopurinol", r"tamoxifen", r"letrozole", r"herceptin", r"keytruda",
    r"immunotherapy", r"trulicity", r"mounjaro", r"wegovy", r"tirzepatide", r"jardiance", r"januvia", r"glipizide",
    r"quetiapine", r"seroquel", r"olanzapine", r"zyprexa", r"risperidone", r"aripiprazole", r"abilify", r"clozapine",
    r"lamotrigine", r"lamictal", r"depakote", r"valproate", r"keppra", r"levetiracetam", r"topiramate",
    r"carbamazepine", r"tegretol", r"mirtazapine", r"trazodone", r"duloxetine", r"cymbalta", r"paroxetine", r"paxil",
    r"effexor", r"celexa", r"buspirone", r"hydroxyzine", r"clonazepam", r"klonopin", r"lorazepam", r"ativan",
    r"diazepam", r"zolpidem", r"ambien", r"modafinil", r"strattera", r"atomoxetine", r"guanfacine", r"elvanse",
    r"lisdexamfetamine", r"dexamphetamine", r"truvada", r"descovy", r"biktarvy", r"antiretrovirals", r"arvs",
    r"naltrexone", r"antabuse", r"disulfiram", r"buprenorphine", r"subutex", r"spironolactone", r"estradiol",
    r"progesterone", r"puberty blockers", r"anticonvulsants", r"mood stabili[sz]ers", r"sleeping pills",
    r"sumatriptan", r"rizatriptan", r"triptans",
)
_PROCEDURE = _any(
    r"surgery", r"an operation", r"transplant", r"chemo(?:therapy)?", r"radiation", r"radiotherapy", r"mastectomy",
    r"hysterectomy", r"vasectomy", r"abortion", r"miscarriage", r"stroke", r"heart attack", r"seizure",
    r"(?:nervous )?breakdown", r"panic attack", r"relapse", r"overdose", r"biopsy", r"ivf", r"c-section",
    r"amputation", r"fertility treatment", r"(?:gastric )?bypass", r"gastric (?:sleeve|band)", r"bariatric surgery",
    r"angioplasty", r"a stent", r"lumpectomy", r"colonoscopy", r"endoscopy", r"an mri", r"a ct scan",
    r"cataract surgery", r"appendectomy", r"ect", r"electroconvulsive therapy", r"a mammogram", r"a smear test",
    r"a pap smear", r"(?:top|bottom|gender[- ]affirming|gender[- ]confirmation|sex[- ]reassignment) surgery",
    r"ffs", r"facial femini[sz]ation", r"a skin graft", r"a (?:hip|knee|shoulder) replacement",
    r"a (?:blood )?transfusion", r"a spinal fusion", r"a (?:double )?mastectomy",
)
# An injury to the user's body ("broke her wrist", "tore his ACL", "a slipped disc"), and an organ taken out ("had
# her gallbladder removed"): a possessive or an article must come first, so "pulled back" or "broke the arm of the
# chair" stay.
_BODY_PART = _any(
    r"wrists?", r"ankles?", r"arms?", r"legs?", r"collarbones?", r"ribs?", r"hips?", r"knees?", r"back", r"shoulders?",
    r"acl", r"mcl", r"meniscus", r"hamstrings?", r"achilles(?: tendon)?", r"fingers?", r"toes?", r"elbows?", r"neck",
    r"pelvis", r"jaw", r"nose", r"foot", r"feet", r"hands?", r"rotator cuff", r"spine", r"vertebrae?", r"kneecaps?",
    r"cruciate(?: ligament)?", r"ligaments?", r"tendons?", r"calf", r"groin", r"thumbs?", r"skull", r"cheekbones?",
    r"coccyx", r"tailbone", r"shins?", r"heels?", r"discs?", r"eye socket",
)
_INJURED = _any(
    r"broke", r"breaks?", r"breaking", r"fractured?", r"fractures", r"fracturing", r"sprain(?:s|ed|ing)?",
    r"dislocat(?:es|ed|ing)", r"tore", r"tears?", r"tearing", r"ruptured?", r"ruptures", r"injur(?:es|ed|ing)",
    r"hurt(?:s|ing)?", r"pulled", r"pulls?", r"twist(?:s|ed|ing)?(?! (?:my|his|her|their) arm)", r"slipped",
    r"crack(?:s|ed|ing)?(?! (?:my|his|her|their) (?:neck|back|knuckles))",
    r"bruised", r"strained",
)
_ORGAN = _any(
    r"gall ?bladder", r"appendix", r"thyroid", r"tonsils", r"spleen", r"a kidney", r"kidney", r"ovar(?:y|ies)",
    r"uterus", r"womb", r"prostate", r"adenoids", r"a lung", r"breasts?", r"colon", r"bowel",
)
_THERAPY = _any(
    r"therapy", r"therapists?", r"psychiatrists?", r"psychologists?", r"counsel+ors?", r"counsel+ing", r"rehab",
    r"psychotherapy", r"cbt", r"emdr",
)
_ORIENTATION = _any(
    r"gay", r"lesbian", r"bisexual", r"bi", r"pansexual", r"asexual", r"aromantic", r"queer", r"homosexual",
    r"heterosexual", r"straight(?=\s*(?:$|[.,;]|and\b))", r"trans(?:gender)?", r"trans (?:wo)?man", r"non-?binary",
    r"enby", r"genderfluid", r"genderqueer", r"intersex", r"two-spirit",
)
_FAITH = _any(
    r"christian", r"catholic", r"protestant", r"evangelical", r"baptist", r"methodist", r"lutheran", r"anglican",
    r"presbyterian", r"pentecostal", r"(?:greek |russian )?orthodox(?: \w+)?", r"mormon", r"lds",
    r"jehovah'?s witness", r"muslim", r"islam", r"sunni", r"shi'?a", r"jewish", r"a jew", r"judaism", r"hindu",
    r"hinduism", r"buddhis[mt]", r"sikh", r"sikhism", r"jain", r"pagan", r"wiccan", r"atheist", r"agnostic",
    r"religious", r"spiritual", r"a believer", r"quaker", r"amish", r"baha'?i", r"taoist", r"shinto",
    r"zoroastrian", r"rastafarian", r"scientologist", r"unitarian", r"wicca", r"(?:seventh-day )?adventist", r"coptic",
    r"sufi", r"jew",
)
_PARTY = _any(
    r"labour(?: party)?", r"the conservatives?", r"conservatives?(?= party| in| at|$|[.,])", r"tor(?:y|ies)",
    r"lib ?dems?", r"liberal democrats", r"snp", r"ukip", r"reform uk", r"greens", r"(?:the )?green party",
    r"democrats?", r"democratic party", r"republicans?", r"gop", r"maga", r"afd", r"cdu", r"csu", r"spd", r"fdp",
    r"die linke", r"bsw", r"rassemblement national", r"national rally", r"la france insoumise", r"psoe", r"vox",
    r"podemos", r"sumar", r"pvv", r"vvd", r"d66", r"likud", r"bjp", r"aam aadmi party", r"ndp", r"social democrats",
    r"sozialdemokraten", r"trump", r"biden", r"harris", r"obama", r"sanders", r"le pen", r"macron", r"farage",
    r"starmer", r"sunak", r"modi", r"bolsonaro", r"lula", r"milei", r"meloni", r"putin", r"brexit", r"remain",
    r"(?:the )?(?:left|right)", r"independence", r"leave", r"plaid cymru", r"sinn f[eé]in", r"dup", r"sdlp",
    r"alliance party", r"fianna f[aá]il", r"fine gael", r"people before profit", r"dsa",
    r"democratic socialists(?: of america)?", r"working families party", r"libertarian party", r"bloc qu[eé]b[eé]cois",
    r"one nation", r"the nationals", r"the coalition", r"labor", r"the liberals", r"congress party", r"aap",
    r"shiv sena", r"anc", r"eff", r"fidesz", r"pis", r"law and justice", r"civic platform", r"akp", r"chp", r"m5s",
    r"lega", r"fratelli d'italia", r"brothers of italy", r"forza italia", r"partito democratico", r"pvda",
    r"groenlinks", r"vlaams belang", r"n-va", r"sweden democrats", r"morena", r"psol", r"ldp",
    r"(?:socialist|communist|labou?r|green|liberal|conservative|democratic|republican|libertarian"
    r"|workers'?|pirate|national|people'?s|progressive|independence|freedom|reform|left|centre|center"
    r"|christian democratic|social democratic|animal|women'?s|scottish|welsh|irish|unionist|nationalist)\s+"
    r"(?:[\w'-]+\s+)?party",
    r"(?:bernie )?sanders'?", r"bernie", r"aoc", r"ocasio-cortez", r"warren", r"desantis", r"haley", r"vance",
    r"walz", r"clinton", r"corbyn", r"badenoch", r"bardella", r"melenchon", r"mélenchon", r"zemmour", r"scholz",
    r"merz",
    r"weidel", r"wagenknecht", r"habeck", r"abascal", r"schlein", r"salvini", r"netanyahu", r"trudeau",
    r"poilievre", r"albanese", r"erdo[gğ]an", r"navalny", r"orban", r"orbán", r"wilders", r"mamdani",
)
_LEANING = _any(
    r"democrat", r"republican", r"tory", r"(?:politically )?conservative(?!\s+(?:with|about|in|when|on)\b)",
    r"liberal(?!\s+(?:arts?|with|about|in|when|on)\b)", r"leftist", r"left-wing", r"right-wing", r"socialist",
    r"communist", r"marxist", r"libertarian", r"progressive", r"anarchist", r"fascist", r"nationalist", r"centrist",
    r"trumpist", r"populist", r"social democrat", r"(?:labour|tory|green|democratic|republican) (?:voter|supporter)",
    r"democratic socialist", r"eco-?socialist", r"trotskyist", r"trotskyite", r"maoist", r"leninist",
    r"marxist-leninist", r"stalinist", r"syndicalist", r"anarcho-[\w-]+", r"ancap", r"tankie", r"neoliberal",
    r"neo-?con(?:servative)?", r"paleo-?conservative", r"monarchist", r"royalist", r"republican", r"loyalist",
    r"zionist", r"anti-zionist", r"feminist", r"eurosceptic", r"euroskeptic", r"brexiteer", r"remainer",
    r"leaver", r"maga (?:supporter|republican|voter)", r"never-?trumper", r"corbynista", r"blairite",
    r"bernie bro", r"(?:left|right)-leaning", r"cent(?:re|er)-(?:left|right)", r"anti-capitalist",
    r"accelerationist", r"separatist", r"independentista", r"green voter", r"(?:lib dem|snp|reform|ukip) (?:voter"
    r"|supporter|member)", r"(?:trump|biden|harris|obama|bernie|sanders|corbyn|starmer|farage) supporter",
)

# What a believer does: fasts, prayers, scripture, their own place of worship ("walks to her synagogue").
_OBSERVANCE = (
    r"\bobserv(?:es|ing|e|ed) (?:the )?[\w-]+ fast\b|\b(?:gave|gives?|giving|given) up\b[^.;]{0,40}?\bfor lent\b"
    r"|\b(?:fajr|dhuhr|zuhr|maghrib|tahajjud|salah|salat|namaz|jummah|jumu'?ah|langar)\b|\bfriday prayers?\b"
    r"|\breads? (?:\w+ ){0,4}?(?:the )?(?:bible|quran|qur'an|koran|torah|bhagavad gita|gita|scriptures?)\b"
    r"(?! stories| as (?:literature|history|a text))"
    r"|\b(?:their|his|her|my|our) (?:local )?(?:church|mosque|synagogue|gurdwara|parish|congregation|shul|mandir)\b"
    r"(?!['’]?s? (?:hall|car park|parking|café|cafe|grounds|building|jumble|fete|fair|bazaar))"
)
# A political opinion held or acted on: a stance on an issue, a protest or a movement joined.
_POLITICAL_STANCE = (
    r"\bdescribes? (?:their|his|her|my) politics as\b"
    r"|\b(?:is |are |am )?(?:firmly |strongly |fiercely |staunchly |vocally )?(?:against|opposed to|opposes|opposing)"
    r" (?:the )?(?:abortion|immigration|monarchy|gun control|death penalty|capital punishment|brexit"
    r"|same-sex marriage|gay marriage)\b(?!\s+(?:fraud|law|lawyers?|officers?|polic(?:y|ies)|cases?))"
    r"|\b(?:supports?|supporting|backs?|in favou?r of|believes? in|campaigns? for|wants?)\s+(?:much\s+)?"
    r"(?:stricter\s+|tighter\s+)?(?:gun control|abortion rights|(?-i:[A-Z][a-z]+) independence|the monarchy"
    r"|a republic|proportional representation)\b"
    r"|\b(?:joins?|joined|joining|goes to|went to|going to|attends?|attended)\s+(?:every |the |a |an "
    r"|several |all the )?(?:[\w'-]+\s+){0,3}?(?:protests?(?!\s+(?:songs?|music|art|playlist)\b)|marches"
    r"|demonstrations|rallies|picket lines"
    r"|(?:protest|solidarity|anti-[\w-]+|climate|peace|pro-[\w-]+) (?:march|rally|demonstration))\b"
    r"|\b(?:with|joined|joins|member of|protests? with|protested with) (?:the )?(?:extinction rebellion"
    r"|just stop oil|black lives matter|march for life|fridays for future|letzte generation)\b"
)
_BE_SHORT = r"(?<=\w)['’](?:m|re)"  # "I'm", "they're" (not "it's": the user is "I" or "they")
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (category, re.compile(pattern, _FLAGS))
    for category, pattern in (
        (HEALTH, rf"\b{_HAVING}\s+{_DEGREE}(?:[\w'-]+\s+)?{_CONDITION}\b{_NOT_ABOUT_THEM}"),
        (HEALTH, rf"\b(?:because of|due to|owing to)\s+{_DEGREE}(?!covid\b)(?:[\w'-]+\s+)?{_CONDITION}\b"
                 rf"{_NOT_ABOUT_THEM}"),
        (HEALTH, rf"(?:\b(?:is|am|are|was|were|being|been|became|become|got)|{_BE_SHORT})\s+(?:\w+\s+){{0,2}}?"
                 rf"{_STATE}\b"),
        (HEALTH, rf"^(?:{_STATE})\b"),
        (HEALTH, rf"\b(?:takes?|taking|took|on|prescribed|start(?:s|ed)|stopp(?:ed)|quit|switched to|uses?|using|"
                 rf"injects?|injecting|"
                 rf"needs?)\s+(?:\w+\s+){{0,2}}?{_MEDICINE}\b{_NOT_ABOUT_THEM}"),
        (HEALTH, rf"\b(?:sees?|seeing|saw|goes to|going to|go to|in|attends?|attending|start(?:s|ed)|has|had|"
                 rf"been in|weekly|regular)\s+(?:a |an |their |his |her |weekly |couples )?{_THERAPY}\b"),
        (HEALTH, rf"\b(?:had|has had|undergo(?:ne|ing|es)?|underwent|scheduled for|waiting for|recovering from|after|"
                 rf"going through)\s+(?:a |an |their |his |her )?(?:[\w'-]+ ){{0,2}}?{_PROCEDURE}\b"),
        (HEALTH, rf"\b{_INJURED}\s+(?:his|her|their|my|a|an)\s+(?:left\s+|right\s+|lower\s+|upper\s+)?{_BODY_PART}\b"
                 rf"|\b(?:a|his|her|their|my)\s+(?:broken|fractured|sprained|dislocated|torn|slipped|herniated)\s+"
                 rf"(?:left\s+|right\s+)?{_BODY_PART}\b"
                 rf"|\b(?:had|has had|having|getting|got)\s+(?:his|her|their|my)\s+{_ORGAN}\s+"
                 rf"(?:removed|out|taken out)\b"),
        (HEALTH, r"\b(?:their|his|her|my) mental health\b|\b(?:uses?|using|wears?|wearing) (?:a |an )?"
                 r"(?:wheelchair|hearing aids?|cochlear implant|prosthetic \w+|insulin pump|glucose monitor)\b"
                 r"|\btrying to conceive\b|\bsober (?:for|since)\b|\b(?:quit|stopped) drinking\b"),
        (SEX_LIFE, rf"(?:{_BE_SHORT}|\b(?:is|am|are|was|identif(?:y|ies|ied) as|came out as|coming out as|out as"
                   rf"|describ(?:es?|ed) (?:themselves|themself|himself|herself|myself) as|(?:she|he)['’]s))\s+"
                   rf"(?:an? )?(?:\w+ )?{_ORIENTATION}\b(?!-)"),
        (SEX_LIFE, r"(?:^|\b(?:they|i|she|he)\s+(?:recently\s+|finally\s+)?)(?:came|coming) out\b"
                   r"(?!\s+(?:of|with|on|in|at|to the|last|this|next|yesterday)\b)"),
        (SEX_LIFE, r"\b(?:sexual orientation|(?:their|his|her|my) sexuality|sex life|sex drive|libido|kinks?|kinky"
                   r"|bdsm|fetish(?:es)?|polyamor(?:ous|y)|open relationship|swingers?|hook-?ups?|one-night stands?"
                   r"|virgin(?:ity)?|celiba(?:te|cy)|sexually active|sex work(?:er)?)\b"),
        (RELIGION, rf"(?:{_BE_SHORT}|\b(?:is|am|are|was|were|been|identif(?:y|ies|ied) as|raised|became|become|"
                   rf"convert(?:s|ed)? to|practi[cs](?:ing|es|e)|follows?|following|devout|observant|born-again))\s+"
                   rf"(?:an? |the )?(?:\w+\s+)?{_FAITH}\b"),
        (RELIGION, r"\b(?:goes to|going to|go to|attends?|attending|went to|never misses|walks to"
                   r"|(?:goes|going|go|went) back to)\s+(?:\w+\s+){0,2}?"
                   r"(?:church|mass|mosque|synagogue|temple|gurdwara|shul|services|bible study|confession"
                   r"|friday prayers?)\b"),
        # "pray for me" is an idiom ("deployed on a friday, pray for me") unless a scan or an operation follows
        (RELIGION, r"\b(?:prays?|praying|prayed)\b(?!\s+(?:mantis|for me\b(?![^.!?]{0,30}\b(?:scan|results|surgery"
                   r"|operation|soul))))"
                   r"|\bfast(?:s|ing|ed)? (?:during|for|on) (?:ramadan|lent|yom kippur)"
                   r"|\bobserv(?:es|ing|e) (?:the )?(?:shabbat|sabbath|ramadan|lent|passover|yom kippur)"
                   r"|\b(?:keeps?|keeping|eats? only|only eats?) (?:kosher|halal|shabbat|sabbath|the sabbath)\b"
                   r"|\b(?:doing|keeping|observing) lent\b"
                   rf"|{_OBSERVANCE}"
                   r"|\b(?:their|his|her|my) (?:faith|religion|religious beliefs)\b|\bbelieves? in god\b"
                   r"|\b(?:wears?|wearing|wore) (?:a |the )?(?:hijab|turban|kippah|yarmulke|niqab|burqa)\b"
                   r"|\b(?:baptized|baptised|bar mitzvah|bat mitzvah)\b"),
        (POLITICS, rf"\b(?:votes?|voted|voting|will vote|plans? to vote)\s+(?:for\s+|against\s+)?(?:the\s+)?"
                   rf"(?:\w+\s+){{0,1}}?{_PARTY}\b"),
        (POLITICS, rf"(?:{_BE_SHORT}|\b(?:is|am|are|was|identif(?:y|ies|ied) as|"
                   rf"considers? (?:themselves|themself|himself|herself|myself)|describ(?:es?|ed) (?:themselves"
                   rf"|themself|himself|herself|myself) as|calls? (?:themselves|themself|himself|herself)"
                   rf"|sees? (?:themselves|themself|himself|herself|myself) as|(?:and|but)(?: also)?(?=\s+an? ))"
                   rf"|self-described|self-declared|self-confessed)\s+"
                   rf"(?:an? |the )?(?:(?:registered|lifelong|life-long|staunch|proud|committed|strong|hardcore"
                   rf"|diehard|die-hard|devoted|avowed|ardent|passionate|fervent|longtime|long-time|paid-up|active"
                   rf"|radical|moderate|convinced|card-carrying|dyed-in-the-wool|hard-line|hardline|unapologetic"
                   rf"|self-described|self-declared|self-confessed|former|closet|secret|proper)\s+)?"
                   rf"{_LEANING}\b"),
        (POLITICS, rf"\b(?:member of|supports?|supporting|supporter of|campaign(?:s|ed|ing)? for|"
                   rf"donat(?:es|ed|ing)? (?:\w+ ){{0,2}}?to|gives? (?:\w+ ){{0,2}}?to|pays? (?:\w+ ){{0,2}}?to|"
                   rf"volunteer(?:s|ed|ing)? for|joined|canvass(?:es|ed|ing)? for|"
                   rf"leaflet(?:s|ed|ing)? for|knock(?:s|ed|ing)? (?:on )?doors for|phone-?bank(?:s|ed|ing)? for|"
                   rf"stood for|backs?|backing|(?:councillor|candidate|activist|organi[sz]er|polling agent|canvasser"
                   rf"|campaigner) for)\s+(?:the\s+)?(?:local\s+|(?-i:[A-Z][a-z]+)\s+)?{_PARTY}(?:'s)?\b"
                   rf"|\b(?:stood|stands|standing|ran|runs|running) as (?:an? )?{_PARTY} candidate\b"
                   rf"|\bphone[- ]bank(?:s|ed|ing)? for (?:the )?{_PARTY}(?: campaign)?\b"),
        (POLITICS, r"\b(?:donat(?:es|ed|ing)? to|volunteer(?:s|ed|ing)? (?:for|on)|canvass(?:es|ed|ing)? for"
                   r"|work(?:s|ed|ing)? on|phone-?bank(?:s|ed|ing)? for|knock(?:s|ed|ing)? (?:on )?doors for)\s+"
                   r"(?:[\w.-]+\s+){0,3}?(?:[\w-]+(?:'s|s'|’s)\s+(?:re-?election\s+|presidential\s+|senate\s+"
                   r"|mayoral\s+|primary\s+)?campaign|(?:re-?election|presidential|election|senate|mayoral"
                   r"|congressional|political|primary|leadership|general election)\s+campaign)\b"),
        (POLITICS, rf"{_POLITICAL_STANCE}"
                   r"|\b(?:pro-life|pro-choice|anti-abortion|anti-immigration|pro-gun|anti-gun|left-wing|right-wing"
                   r"|far-left|far-right|political (?:views|opinions|beliefs|leanings|affiliation)"
                   r"|politically (?:conservative|liberal|left|right|progressive))\b"),
        (FINANCES, rf"\b(?:earns?|earning|earned|makes?|making|made|(?:gets? |is )?paid|takes? home|salary|income"
                   rf"|wages?|(?:take-home )?pay)\b[^.;]{{0,30}}?(?:{MONEY}|\d[\d,.]*k?\s+(?:a|an|per)\s+"
                   rf"(?:year|month|week|hour))"),
        (FINANCES, r"\b(?:in debt|debt-free|bankrupt(?:cy)?|insolven(?:t|cy)|foreclosure|repossessed|overdrawn"
                   r"|maxed out|paycheck to paycheck|payday loans?|credit score|net worth|food stamps"
                   r"|(?<!at the )(?<!at a )(?<!for the )(?<!for a )(?<!at their )food banks?"
                   r"|poverty|struggling financially|financial(?:ly)? (?:trouble|difficult\w*|struggl\w*|problems"
                   r"|stress|hardship)|money (?:problems|troubles|worries)|worried about money"
                   r"|(?:is|am|are|being|flat|always|['’]m|['’]re) broke|broke until"
                   r"|behind on (?:the |their |my )?(?:rent|payments"
                   r"|bills|mortgage)|late on (?:rent|payments)|on (?:welfare|benefits|unemployment|universal credit"
                   r"|jobseeker'?s allowance|housing benefit|pip"
                   r"|pension credit|carer'?s allowance|tax credits|snap|medicaid|section 8|food assistance"
                   r"|disability benefits)|unemployment benefits)\b"),
        (FINANCES, rf"\b(?:has|have|had|pays?|paying|took out|taking out|their|his|her|my)\s+(?:an?\s+)?"
                   rf"(?:\w+\s+)?(?:mortgage|loans?|debts?|overdraft)\b(?!\s+officer)"
                   rf"|(?:{MONEY}|\d[\d,.]*k?)\s+(?:in|of)\s+(?:\w+\s+){{0,2}}?(?:debts?|loans?|savings)\b"
                   rf"|\bowe[sd]?\b[^.;]{{0,30}}?\d|\binherit\w*\s+(?:about\s+|around\s+)?{MONEY}"
                   rf"|\b(?:has|have|had)\s+(?:about\s+|around\s+|over\s+)?{MONEY}\s+(?:saved|in savings|in the bank)"
                   rf"|\b(?:portfolio|investments?|savings|assets|stocks|crypto)\b[^.;]{{0,25}}?"
                   rf"(?:worth|of|at|total\w*)\s+(?:about\s+|around\s+|over\s+)?{MONEY}"
                   rf"|\bcan(?:'?t|not) afford (?:the |their |my |to pay )?(?:rent|bills|food|groceries|mortgage"
                   rf"|\w+ payments|tuition|medication|medicine|healthcare|therapy)"),
    )
)
def _top_level(pattern: str, separator: str = "|") -> list[str]:
    """`pattern` split at `separator` outside parentheses."""
    parts, depth, current = [], 0, ""
    for char in pattern:
        depth += (char == "(") - (char == ")")
        if char == separator and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current]


def _closing(pattern: str) -> int:
    """The index of the parenthesis closing the one `pattern` opens with."""
    depth = 0
    for index, char in enumerate(pattern):
        depth += (char == "(") - (char == ")")
        if depth == 0:
            return index
    return -1


def _required_groups(pattern: str) -> list[str]:
    """The outermost groups of `pattern` every match goes through (not followed by `?`, `*` or `{0,`)."""
    groups, index = [], 0
    while (start := pattern.find("(", index)) >= 0:
        end = start + _closing(pattern[start:])
        if end < start:
            return []
        following = pattern[end + 1 : end + 4]
        if not following.startswith(("?", "*", "{0")) and pattern.startswith("(?:", start):
            groups.append(pattern[start : end + 1])
        index = end + 1
    return groups


def _needed_words(pattern: str) -> set[str]:
    """Word prefixes one of which every match of a vocabulary fragment contains ("tumou?rs?" -> "tumo"); "" when
    no literal word is certain (the category then always runs). An acronym written in capitals only
    ("(?-i:POTS)") needs its word like any other."""
    pattern = re.sub(r"\(\?-i:([\w'’ -]*)\)", lambda match: match.group(1).lower(), pattern)
    if pattern.startswith("(?:") and _closing(pattern) == len(pattern) - 1:
        pattern = pattern[3:-1]
    branches = _top_level(pattern)
    if len(branches) > 1:
        return set().union(*(_needed_words(branch) for branch in branches))
    pattern = re.sub(r"\(\?:[^()]*\)[?*]|\(\?<?[=!][^()]*(?:\([^()]*\)[^()]*)*\)|\\b|\^|\$", "", pattern)
    groups = _required_groups(pattern)
    if len(groups) > 1:  # one group's words suffice, and spare expanding every combination of the groups
        candidates = [needed for needed in map(_needed_words, groups) if "" not in needed]
        if candidates:
            return max(candidates, key=lambda needed: min(map(len, needed)))
    group = re.search(r"\(\?:([^()]*)\)", pattern)
    if group:
        return set().union(*(_needed_words(pattern[: group.start()] + branch + pattern[group.end() :])
                             for branch in group.group(1).split("|")))
    best = ""
    for word in re.split(r"\s+|\\s[+*]?| ", pattern):
        literal = re.match(r"[\w'’-]*", word)
        text = literal.group(0) if literal else ""
        if text and word[len(text) : len(text) + 1] in ("?", "*", "{"):
            text = text[:-1]
        best = max(best, text, key=len)
    return {best.lower() if len(best) >= 2 else ""}


_TRIGGER_WORDS: dict[str, frozenset[str]] = {
    category: frozenset().union(*(_needed_words(fragment) for fragment in fragments))
    for category, fragments in (
        (HEALTH, (_CONDITION, _STATE, _MEDICINE, _PROCEDURE, _THERAPY, _INJURED, r"broken", r"fractured",
                  r"sprained", r"dislocated", r"torn", r"slipped", r"herniated", _ORGAN, r"mental", r"wheelchair",
                  r"hearing", r"cochlear", r"prosthetic", r"insulin", r"glucose", r"conceive", r"sober", r"drinking")),
        (SEX_LIFE, (_ORIENTATION, r"came", r"coming", r"sex", r"libido", r"kink", r"bdsm", r"fetish", r"polyamor",
                    r"open", r"swinger", r"hook", r"one-night", r"virgin", r"celiba")),
        (RELIGION, (_FAITH, r"church", r"mass", r"mosque", r"synagogue", r"temple", r"gurdwara", r"shul", r"services",
                    r"bible", r"confession", r"prayer", r"pray", r"ramadan", r"lent", r"yom", r"shabbat", r"sabbath",
                    r"passover", r"kosher", r"halal", r"faith", r"religio", r"god", r"hijab", r"turban", r"kippah",
                    r"yarmulke", r"niqab", r"burqa", r"bapti", r"mitzvah", r"fast", r"fajr", r"dhuhr", r"zuhr",
                    r"maghrib", r"tahajjud", r"salah", r"salat", r"namaz", r"jummah", r"jumu", r"langar", r"friday",
                    r"quran", r"qur", r"koran", r"torah", r"gita", r"parish", r"congregation", r"mandir")),
        (POLITICS, (r"vot", _PARTY, _LEANING, r"pro-", r"anti-", r"left-wing", r"right-wing", r"far-", r"politic",
                    r"candidate", r"phone", r"abortion", r"immigration", r"monarchy", r"gun", r"death", r"capital",
                    r"same-sex", r"gay", r"republic", r"proportional", r"protest", r"march", r"demonstration",
                    r"rally", r"rallies", r"picket", r"extinction", r"oil", r"lives", r"life", r"fridays", r"letzte")),
        (FINANCES, (r"debt", r"bankrupt", r"insolven", r"foreclosure", r"repossess", r"overdra", r"maxed",
                    r"paycheck", r"payday", r"credit", r"worth", r"food", r"poverty", r"financ", r"money", r"broke",
                    r"rent", r"payment", r"bills", r"welfare", r"benefit", r"unemployment", r"mortgage", r"loan",
                    r"saved", r"savings", r"afford", r"jobseeker", r"housing", r"pip", r"pension", r"carer", r"tax",
                    r"snap", r"medicaid", r"section", r"assistance")),
    )
}
_SPECIAL_NEEDED = tuple(frozenset(_needed_words(pattern.pattern)) for _, pattern in SPECIAL_PATTERNS)
_LANGUAGE_NEEDED = tuple(frozenset(_needed_words(vocabulary)) for _, _, vocabulary in LANGUAGE_PATTERNS)
_TRIGGER_LENGTHS = frozenset(
    len(prefix) for needed in (*_TRIGGER_WORDS.values(), *_SPECIAL_NEEDED, *_LANGUAGE_NEEDED) for prefix in needed
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_WORD = re.compile(r"[\w'’-]+")
_JOINED = re.compile(r"[-'’]")  # a hyphen or an elision's apostrophe inside a word


def _prefixes(text: str) -> set[str]:
    """The word prefixes of `text` the trigger words are looked up among: each word's, and each part's of a
    hyphenated or elided word ("typ-2-diabetes" gives "diab" too, "l'OFPRA" gives "ofpra")."""
    words = _WORD.findall(text.lower())
    words += [part for word in words if _JOINED.search(word) for part in _JOINED.split(word)[1:] if part]
    return {word[:length] for word in words for length in _TRIGGER_LENGTHS}


def _possible(text: str) -> set[str]:
    """The categories whose patterns could match `text`: it has one of their needed words (or, for finances, a
    digit). A few set operations, far cheaper than running every pattern."""
    prefixes = _prefixes(text)
    found = {category for category, needed in _TRIGGER_WORDS.items() if needed & prefixes}
    if any(char.isdigit() for char in text):
        found.add(FINANCES)
    return found


# "Their cat has diabetes", "Her mother is Catholic": about someone else when a person or pet of theirs comes first.
_SOMEONE_ELSE = re.compile(
    r"\b(?:their|his|her|my|a|the|whose|\w+['’]s)\s+(?:\w+\s+)?(?:cat|dog|pet|horse|mother|mom|mum|father|dad|parents?"
    r"|sister|brother|siblings?|friends?|partner|wife|husband|spouse|sons?|daughters?|kids?|child(?:ren)?|baby"
    r"|grandma|grandmother|grandfather|grandpa|grandparents?|aunt|uncle|cousin|colleagues?|co-?workers?|boss"
    r"|neighbou?rs?|roommates?|flatmates?|boyfriend|girlfriend|fianc[ée]e?|in-laws?|nephew|niece|team ?mates?"
    r"|clients?|patients?|students?|characters?|protagonist|band|party|company|players?|bandmates?|wingers?"
    r"|strikers?|goalkeeper)(?:'s)?\b"
    r"|\b(?:people|others|users|customers|someone|anyone|everyone|children|kids|patients|clients|students|pupils"
    r"|residents|families|adults|teens|teenagers|veterans|refugees|migrants|survivors)\b"
    r"|\b(?:married to|engaged to|son of|daughter of|child of|raised by)\b",
    _FLAGS,
)
# The user and someone of theirs as one subject: "he and his girlfriend are trying for a baby".
_TOGETHER = re.compile(r"\b(?:i|he|she|they)\s+and\s+(?:my|his|her|their)\s+\w+(?:\s+\w+)?\s*$", _FLAGS)
# Someone of the user's told something about the user, right before it: "told my sister i'm into girls too".
_TOLD = re.compile(
    r"\b(?:told|tell|tells|telling|came out to|come out to|admitted to|confessed to|explained to)\s+(?:my|their|his"
    r"|her)\s+(?:(?!(?:she|he|it|they|i|that)\b)\w+\s+){1,2}?(?:that\s+)?(?:(?:i['’]m|i am|i|they['’]re|they)\s+"
    r"(?:\w+\s+)?)?$",
    _FLAGS,
)
# "who" points at someone else, unless the fact describes the user first: "Is a mechanic who goes to synagogue".
_RELATIVE = re.compile(r"\b(?:who|whose)\b", _FLAGS)
_DESCRIBES_THE_USER = re.compile(
    r"\s*(?:(?:the\s+)?user\s+|they\s+|i\s*|(?-i:[A-Z][a-z]+)\s+)?(?:is|was|am|are|works as|['’]m)\s+an?\b"
    # a summary's opening noun phrase: "Librarian in Wellington who ...", "Genderqueer barista in Helsinki who ..."
    r"|(?-i:[A-Z][a-z-]+)(?:\s+[a-z-]+){0,2}\s+(?:in|at|from|based in)\s+(?-i:[A-Z])[\w-]+(?:\s+[\w-]+)?"
    r"\s+(?:who|whose)\b", _FLAGS
)
_CLAUSE_START = re.compile(  # a comma before the user's next predicate too: "lives with her partner, is a Sikh"
    r"[.;!?。；，、]|,(?=\s+(?:and\s+)?(?:is|was|has|had|works|lives|plays|sits|goes|runs|keeps|takes|attends"
    r"|volunteers|belongs|became|says|said|mentioned|recently)\b|\s+i(?:['’]m| am| have|['’]ve| was)\b)"
    r"|\b(?:and|but|while|whereas|although|y|e|et|und|ed|pero|mais|aber|mas|maar|ale|и|но)\b", _FLAGS
)
_APPOSITION = re.compile(r"\s*(?:a|an|the|who|which|whose)\b", _FLAGS)
_PROPER_NAME = re.compile(r"(?:[A-Z][a-z]+\s+){1,3}[A-Z][a-z]+")


# "Is reading a book about the history of Alcoholics Anonymous": the words name a topic, not the user; unless the
# topic is their own ("a talk about their depression", "a blog about living with MS").
_TOPIC = re.compile(
    r"\b(?:books?|novels?|memoirs? of|films?|movies?|documentar(?:y|ies)|podcasts?|articles?|essays?|thesis|papers?"
    r"|newsletters?|blogs?|magazines?|websites?|channels?|videos?"
    r"|courses?|class(?:es)?|lectures?|talks?|shows?|series|histor(?:y|ies)|plays?|songs?|exhibitions?|research"
    r"|stud(?:y|ies)|reports?|dissertations?|columns?|chapters?|seminars?|modules?|workshops?|zines?|poems?"
    r"|features?|pieces?|stor(?:y|ies)|textbooks?|lessons?|panels?|conferences?|exhibits?|projects?|photos?"
    r"|photographs?|reporting|journalism|campaigns?|training|guides?|leaflets?|posters?|speeches?)\s+"
    r"(?:about|on|of|into|around|covering)\b"
    r"|\b(?:writes?|wrote|written|writing|reads?|reading|teach(?:es|ing)?|taught|lectures?|lecturing|research"
    r"(?:es|ed|ing)?|stud(?:ies|ied|ying)|reports?|reported|reporting|covers?|covered|covering|blogs?|blogged"
    r"|edits?|edited|editing|translat(?:es|ed|ing)) (?:\w+ )?(?:about|on)\b|\bspeciali[sz](?:es|ed|ing) in\b"
    r"(?!\s+(?:their|his|her|my|own|living with|life with|surviving|coping with|recovering from|being)\b)",
    _FLAGS,
)


# "Is a pharmacist who dispenses methadone", "Works at the immigration tribunal", "Trabaja en un centro de
# rehabilitación": the words are the object of the user's work, not their own matter, when a verb of work comes
# right before them.
_AT_WORK = re.compile(
    r"\b(?:(?:works?|worked|working|volunteers?|volunteering|trabaja|trabajó|arbeitet|arbeitete|travaille|lavora"
    r"|trabalha|werkt)\s+(?:as|at|in|for|on|with|como|en|de|als|bei|im|in der|comme|à|chez|dans|come|presso|em|no|na"
    r"|bij)\b(?:\s+[\w'’-]+){0,4}"
    r"|(?:dispens\w*|prescrib\w*|administer\w*|sells?|selling|sold|stocks?|runs?|running|teach(?:es|ing)?|taught"
    r"|leads?|leading|organi[sz]es|photograph\w*|films?|filming|covers?|covering|interview\w*|treats?|treating"
    r"|counsels?|counsell?ing|designs?|designing|builds?|building|processes|processing|handles?|handling"
    r"|audits?|auditing|assesses|assessing|diagnoses|diagnosing)(?:\s+[\w'’-]+){0,2})\s*$",
    _FLAGS,
)


def _about_a_topic(text: str, start: int) -> bool:
    """A book, film, course or history about the match's words, or a verb of the user's work, comes earlier in the
    same clause."""
    clause = _clause_before(text, start)
    return bool(_TOPIC.search(clause) or TOPIC.search(clause) or _AT_WORK.search(clause))


def _clause_before(text: str, end: int) -> str:
    """The part of the clause holding `end` that comes before it (boundaries are found in the whole text, so one
    that looks ahead, like a comma before "is", sees what follows it)."""
    start = 0
    for boundary in _CLAUSE_START.finditer(text):
        if boundary.end() > end:
            break
        if boundary.group(0) == "," and _APPOSITION.match(text, text.rfind(",", 0, boundary.start()) + 1):
            continue  # "Their dog Rosie, a springer spaniel, has ...": the comma closes an apposition
        start = boundary.end()
    return text[start:end]


def _about_someone_else(text: str, start: int) -> bool:
    """A person or pet of the user's is named earlier in the same clause as the match, unless the user is telling
    them ("finally told my sister i'm bi") or is one subject with them ("she and her husband are trying ...")."""
    clause = _clause_before(text, start)
    if _TOLD.search(clause) or (_TOGETHER.search(text, 0, start) and not _RELATIVE.search(clause)):
        return False
    if _SOMEONE_ELSE.search(clause) or OTHER_PEOPLE.search(clause):
        return True
    return bool(_RELATIVE.search(clause)) and not _DESCRIBES_THE_USER.match(clause)


def _in_a_name(text: str, start: int, end: int) -> bool:
    """The match is part of a title-cased name mid-sentence ("a band called The Debt Collectors")."""
    if start == 0:
        return False
    return any(0 < name.start() <= start and end <= name.end() for name in _PROPER_NAME.finditer(text))


@lru_cache(maxsize=8192)
def categories_in(text: str) -> frozenset[str]:
    """Every sensitive category `text` states about the user (health, sex life, religion, politics, finances, ...).
    A backstop: the patterns look for statements about the user, not for the topics' words; what they miss and the
    trained reader (`sensitive_reader`) takes for sensitive counts as `SENSITIVE_UNSPECIFIED`."""
    found = pattern_categories(text)
    if not found and reads_as_sensitive(text):
        return frozenset((SENSITIVE_UNSPECIFIED,))
    return found


def pattern_categories(text: str) -> frozenset[str]:
    """The categories the patterns alone find in `text` (the backstop without its trained reader)."""
    return _scan(text, triggers=True)


def _scan(text: str, *, triggers: bool) -> frozenset[str]:
    found: set[str] = set()
    possible = _possible(text) if triggers else set(CATEGORIES)
    for category, pattern in _PATTERNS:
        if category not in found and category in possible and _states(text, category, pattern):
            found.add(category)
    # `sensitive_special` and `sensitive_languages`: the same word gate, except for Chinese, Japanese or Korean
    # text (its words run together, so no prefix names them)
    cjk = not text.isascii() and bool(_CJK.search(text))
    prefixes = _prefixes(text) if triggers and not cjk else None
    for (category, pattern), needed in zip(SPECIAL_PATTERNS, _SPECIAL_NEEDED, strict=True):
        if category in found or (prefixes is not None and not needed & prefixes):
            continue
        if _states(text, category, pattern):
            found.add(category)
    for (category, pattern, _), needed in zip(LANGUAGE_PATTERNS, _LANGUAGE_NEEDED, strict=True):
        if category in found or (prefixes is not None and not needed & prefixes):
            continue
        if _states_in_a_frame(text, pattern):
            found.add(category)
    if cjk and not CJK_NOT_ABOUT_THEM.search(text):
        found.update(category for category, pattern in CJK_PATTERNS
                     if category not in found and _states(text, category, pattern))
    return frozenset(found)


def _states_in_a_frame(text: str, pattern: re.Pattern[str]) -> bool:
    """A match of an other-language frame and term about the user: the frame may hold other words ("Su madre tiene
    cáncer" matches from "madre"), so the person, pet or topic is looked for up to the end of the match."""
    for match in pattern.finditer(text):
        clause = _clause_before(text, match.end())
        if _SOMEONE_ELSE.search(clause) or OTHER_PEOPLE.search(clause) or _TOPIC.search(clause) or TOPIC.search(
            clause
        ) or _AT_WORK.search(_clause_before(text, match.start())):
            continue
        return True
    return False


def _states(text: str, category: str, pattern: re.Pattern[str]) -> bool:
    """A match of `pattern` in `text` about the user (not someone of theirs, not a topic, not part of a name)."""
    for match in pattern.finditer(text):
        if _about_someone_else(text, match.start()) or _about_a_topic(text, match.start()):
            continue
        if category in (HEALTH, FINANCES, SEX_LIFE) and _in_a_name(text, match.start(), match.end()):
            continue
        return True
    return False


def category_of(text: str) -> str | None:
    """One sensitive category `text` states about the user (the first in `CATEGORIES` order), or None."""
    found = categories_in(text)
    return next((category for category in CATEGORIES if category in found), None)
