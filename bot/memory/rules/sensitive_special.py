"""More of what the sensitive backstop reads: recovery and addiction, organ donation and transplant lists, criminal
records, immigration status, gender identity, trade-union membership, genetic and biometric data, and wordings of
the first five categories that `bot.memory.rules.sensitive` does not anchor (a detail inside a longer fact, "while
pregnant", "who goes to synagogue", and the common phrasings in other languages).

Each pattern names what people say about themselves, not the topic's words: "is on the transplant list", not
"transplant"; "a Unite member", not "union"; "served two years in prison", not "prison". So jobs, studies, hobbies
and things ("works as an immigration lawyer", "plays rugby union", "transplanted the seedlings", "a prison guard",
"uses Face ID") stay ordinary. Whether the text is about someone else is decided by the caller, as for every
pattern. Pure data: compiled patterns by category, and a cheap gate that says when none can match.
"""

from __future__ import annotations

import re

HEALTH = "health"
SEX_LIFE = "sex life"
RELIGION = "religion"
POLITICS = "politics"
FINANCES = "finances"
RECOVERY = "recovery and addiction"
ORGAN_DONATION = "organ donation"
CRIMINAL_RECORD = "criminal record"
IMMIGRATION = "immigration status"
GENDER_IDENTITY = "gender identity"
TRADE_UNION = "trade-union membership"
GENETIC = "genetic data"
BIOMETRIC = "biometric data"
SPECIAL_CATEGORIES = (
    RECOVERY, ORGAN_DONATION, CRIMINAL_RECORD, IMMIGRATION, GENDER_IDENTITY, TRADE_UNION, GENETIC, BIOMETRIC
)

_UNIONS = (
    r"(?:unite|unison|gmb|rmt|neu|nasuwt|teamsters|ver\.di|ig metall|cgt|ccoo|ugt|cfdt|aslef|cwu|pcs|ucu|seiu|uaw"
    r"|nea|aft|rcn|bma|usdaw|equity|solidarność|fnv|cisl|cgil)"
)
_SUBSTANCE = (
    r"(?:cocaine|heroin|meth|crack|opioids|opiates|painkillers|weed|cannabis|drugs|smoking|cigarettes|vaping|booze"
    r"|alcohol|drink|drinking|gambling|ketamine|benzos)"
)
_VERBS_OF_GIVING = (
    r"(?:enrolled|registered|gave|given|provided|submitted|shared|linked|had|took|taken|uploaded|exported|stored)"
)
_BIOMETRICS = (
    r"(?:fingerprints|fingerprint template|face scan|facial scan|iris(?: scan)?|retina(?:l)? scan"
    r"|palm[- ]vein(?: scan)?"
    r"|palm ?print|voiceprint|voice sample|voice id|faceprint|face photo|dna sample|biometrics?|biometric data)"
)

_PATTERNS: tuple[tuple[str, str], ...] = (
    (RECOVERY, r"\b(?:alcoholics|narcotics|gamblers|cocaine|overeaters|sex addicts) anonymous\b"
               r"|\b(?:aa|na|ga|ca)\s+meetings?\b|\b12[- ]step\b|\b(?:their|his|her|my) sponsor(?:'s)?\s+(?:advice"
               r"|says?)"
               r"|\bmethadone\b|\bsuboxone\b|\bnicotine patch\w*|\bquitting smoking\b|\bgambling (?:problem"
               r"|addiction)\b"
               rf"|\b(?:off|clean from|clean off|quit|quitting|stopped|kicked|sober from)\s+{_SUBSTANCE}\b"
               rf"|\b(?:\w+ )?(?:days?|weeks?|months?|years?) (?:clean|sober)\b|\bstint in rehab\b|\b(?:in|out of"
               rf"|finished|left) rehab\b"
               r"|\bgetting help for (?:a|their|his|her|my) \w+ (?:problem|addiction)\b|\brelaps\w+\b"
               r"|\bsponsor\b[^.]{0,50}\b(?:cravings?|sober|sobriety|relaps\w*|(?:12|twelve)[- ]steps?|step work)\b"
               r"|\b(?:cravings?|sobriety|relaps\w*)\b[^.]{0,50}\bsponsor\b"
               r"|\b(?:est|es|é|è|ist|is|sono|soy|sou|jest)\s+(?:\w+\s+)?(?:alcoolique|alcoh[oó]lic[oa]|alco[oó]latra"
               r"|alco[oó]lic[oa]|alcolizzat[oa]|alcolista|alkoholiker(?:in)?|alcoholist|alkoholikiem|alkoholiczk[aą])\b"
               r"|alcooliques anonymes|alcohólicos anónimos|anonyme alkoholiker|sin beber|sans boire|en rehabilitación"
               r"|rehabilitación por|\bentzug\b|\btrocken\b|\bem recuperação\b|\ben (?:cure de )?désintox\w*"),
    (ORGAN_DONATION, r"\b(?:registered |an? )?organ donor\b|\bdonor (?:card|register|registry)\b"
                     r"|\b(?:bone marrow|stem cell|blood stem cell)\s+(?:donor|registry|register|donation)\b"
                     r"|\bdonated (?:a |one of their |their |his |her |my |part of (?:their|his|her|my) )?"
                     r"(?:kidney|liver|lung|bone marrow|cornea|stem cells)\b"
                     r"|\b(?:kidney|liver|lung|heart|cornea|pancreas|bone marrow|organ|double lung)\s+transplant\b"
                     r"|\btransplant (?:list|waiting list)\b|\bwaiting (?:list )?for an? (?:new |donor )?(?:kidney"
                     r"|liver"
                     r"|lung|heart|pancreas|cornea)\b|\bdonor (?:kidney|liver|lung|heart|match)\b"
                     r"|\bwaiting for a donor\b"
                     r"|\btrasplante\b|\btransplante\b|transplantation|trapianto|greffe|移植|이식|donneur d'organes"
                     r"|donante de órganos"
                     r"|organspender\w*|dador de órgãos|doador de órgãos"),
    (CRIMINAL_RECORD, r"\bcriminal record\b(?!\s+checks?\b)|\bconvicted\b|\bconvictions?\b|\bcriminal charges?\b"
                      r"|\b(?:served|did|spent)\s+(?:\w+\s+){0,3}(?:in|behind)\s+(?:prison|jail|bars)\b"
                      r"|\b(?:went to|released from|got out of|out of|in)\s+(?:prison|jail|juvie)\b"
                      r"|\bprobation\b(?!\s+period|ary)|\bparole\b|\bankle (?:tag|monitor)\b|\bcurfew order\b"
                      r"|\bsuspended sentence\b|\bcommunity service (?:for|order|sentence)\b"
                      r"|\b(?:pending|facing)\s+(?:an? )?(?:\w+ )?charges?\b|\bcourt date\b|\bon bail\b"
                      r"|\b(?:assault|fraud|theft|burglary|drugs?|dui|dwi|drink[- ]driving|drunk[- ]driving"
                      r"|shoplifting)"
                      r"\s+(?:charge|conviction|arrest|offen[cs]e)s?\b|\bcaution from the police\b|\barrested for\b"
                      r"|\bsex offenders? register\b|\bspent conviction\b|vorstrafe|vorbestraft|\bim gefängnis\b|cárcel"
                      r"|\bprisión\b|de la prison|en prison|\bprisão\b|\bin carcere\b|libertad condicional"
                      r"|前科|服刑|坐牢|刑務所|교도소|전과"),
    (IMMIGRATION, r"\b(?:asylum|refugee status|refugee claim|leave to remain|indefinite leave|settled status"
                  r"|pre-settled status|green card|permanent residen(?:cy|ce)|residence permit|residency permit"
                  r"|work permit|daca|undocumented|overstayed|deportation|deported|citizenship application"
                  r"|naturali[sz]ation (?:application|ceremony|interview)|home office caseworker|immigration (?:status"
                  r"|hearing|case|appeal|detention))\b|\bon an? (?:[\w-]+[\s-]){0,3}visa\b"
                  r"|\bvisa (?:hearing|interview|application|status|expires|runs out|renewal|that runs out)\b"
                  r"|\b(?:student|work|tourist|spouse|skilled worker|visitor|h-1b|h1b|working holiday) visa\b"
                  r"|permiso de residencia|autorização de residência|autorización de residencia|solicitud de asilo"
                  r"|asylantrag|\basile\b|\basilo\b|aufenthaltserlaubnis|aufenthaltstitel|titre de séjour"
                  r"|sans[- ]papiers"
                  r"|sin papeles|\bduldung\b|permesso di soggiorno|ビザ|签证|비자|难民|難民|在留資格"),
    (GENDER_IDENTITY, r"\btrans(?:gender)?\s+(?:wo)?man\b|\btrans (?:person|woman|man)\b|\btransgender\b"
                      r"|\b(?:started|starting|on|taking|began)\s+(?:hrt|testosterone|oestrogen|estrogen|hormones"
                      r"|puberty blockers)\b|\bgender (?:identity )?clinic\b|\bgender dysphoria\b|\bdeadname\b"
                      r"|\btransition(?:ing|ed)?\b(?!\s+(?:from|to|era|period|phase|plan|team|costs?))"
                      r"|\bchanged (?:their|his|her|my) name (?:by deed poll|legally)\b|\bnon-?binary\b|\bgenderfluid\b"
                      r"|\b(?:they/them|she/her|he/him) pronouns\b|\b(?:mulher|mujer|femme|frau|donna|homem|hombre"
                      r"|homme) trans\b"),
    (TRADE_UNION, r"\b(?:trade|labou?r)\s+union\b(?!\s+(?:law|history|studies|movement))"
                  r"|\bunion (?:rep|representative|member|membership|dues|steward|branch|card|organi[sz]er)\b"
                  r"|\bshop steward\b|\b(?:member of|joined|belongs to|active in)\s+(?:the\s+)?"
                  rf"{_UNIONS}\b|\b{_UNIONS}\s+(?:member|rep|representative|branch|steward|organi[sz]er|card)\b"
                  rf"|\bmitglied (?:der|bei|in der) (?:gewerkschaft|{_UNIONS})"
                  r"|\bpicket(?:s|ed|ing)?\b(?!\s+fence)|\bon strike\b|\bstrike days?\b|gewerkschaft\w*"
                  r"|syndiqu\w+|\bsindicato\b|\bsindacato\b|zwi[aą]zk\w* zawodow\w*|\bafiliad[oa] a\b"
                  r"|\bvertrauens(?:mann|frau)\b|工会|労働組合|노조|노동조합"),
    (GENETIC, r"\b(?:brca[12]?|apoe4|huntington'?s gene|factor[- ]v[- ]leiden|faktor-v-leiden|lynch syndrome"
              r"|ha?emochromatosis gene|sickle cell trait|genetic (?:mutation|predisposition|condition|disorder|test"
              r"|testing|counsel+ing|risk|marker)|gene (?:mutation|variant)|inherited risk)\b"
              r"|\bcarrier (?:of|for) (?:the )?[\w\s'-]{0,30}?(?:gene|mutation|variant|trait|cystic fibrosis"
              r"|sickle cell"
              r"|tay-sachs|thalassa?emia)\b|\bcarr(?:y|ies) (?:the|a) [\w\s'-]{0,30}?(?:gene|mutation|variant)\b"
              r"|\b(?:dna|genetic|23andme|ancestry) (?:test|results?) (?:showed|shows|found|revealed|confirmed|says)"
              r"[^.]{0,40}(?:gene|mutation|variant|risk|copies|carrier|syndrome|predisposition)"
              r"|\btested positive for the [\w']+ gene\b|mutación|mutação|mutazione|-mutation\b"
              r"|遗传病|基因突变|遺伝子"),
    (BIOMETRIC, rf"\b{_VERBS_OF_GIVING}\b[^.]{{0,40}}\b{_BIOMETRICS}\b|\b{_BIOMETRICS}\b[^.]{{0,30}}"
                r"\b(?:on file|registered|linked|enrolled|stored|taken|scanned)\b|\bwith a (?:face|iris|palm) scan\b"),
    (HEALTH, r"\bdiagnosed with\b|\b(?:knee|hip|joint) replacement\b|\bpacemaker\b|\bcpap\b|\bchemo\b|\bchimio\b"
             r"|\ben rémission\b|\ben remisión\b|\bin remissione\b|\bem remissão\b"
             r"|\boncologists?\b|oncólogo|oncologo|\bdialysis\b|透析|diálisis|\bdialyse\b|\bivf\b|\b(?:while|is"
             r"|she's|being|was)"
             r"\s+pregnant\b|embarazada|schwanger|enceinte|grávida|incinta|怀孕|妊娠中|migräne|\basma\b|dépression"
             r"|depresión|depressão|\bdepression\b(?!\s+(?:era|research|charity|awareness))|うつ病|抑郁|焦虑症|공황장애"
             r"|\bdiabet\w+\b(?!\s+(?:research|charity|awareness|clinic|nurse|apps?|software|ward|unit|team"
             r"|uk))|sclerosi multipla|esclerosis"
             r"|sclérose|乳腺癌|确诊|心理医生|通院中|\bhiv\b|\bcancer\b(?!\s+(?:charity|research|ward|run))"),
    (RELIGION, r"\bconverted to (?:\w+ )?(?:catholicism|islam|judaism|buddhism|hinduism|christianity|orthodoxy"
               r"|sikhism)\b"
               r"|\b(?:ist|est|es|é|è|sou|soy|jest)\s+(?:\w+\s+)?(?:muslim\w*|musulman\w*|christ\w*|cristian\w*"
               r"|catholique"
               r"|católic\w|cattolic\w|katholisch|evangélic\w|evangelisch|judío|judía|jüdisch|juif|juive|ebre[oa]"
               r"|buddhist\w*|budista|bouddhiste|hindu|sikh|ateo|atea|athée)\b|zeuge jehovas|testigo de jehová"
               r"|佛教徒|基督徒|穆斯林|做礼拜|\bgoes to (?:synagogue|church|mosque|temple|mass)\b"
               r"|\bto (?:their|his|her|my) church\b|\btith\w+"),
    (POLITICS, r"\b(?:\w+ )?party member\b|\bmember of the [\w\s]{0,25}? party\b|\bcard-carrying\b"
               r"|\bvot(?:es?|ed|ing) (?:reform|green|labour|tory|conservative|lib dem)\b|\bcanvass\w*\s+for\b"
               r"|\bmilite\b|\bvota (?:a|al|por)\b|\bvote (?:écologiste|socialiste|rn|lfi)\b"
               r"|mitglied der (?:spd|cdu|csu|fdp|afd|grünen|linken)|党员"),
    (FINANCES, r"\bdebt collectors?\b|\bchapter (?:7|11|13)\b|\b(?:an|their|his|her|my) iva\b|schuldsanering"
               r"|\bschulden\b|\bdívida\b|\bdeudas?\b|\bdettes?\b|\bdebiti\b"
               r"|\bcan(?:'t|not| barely)\s+(?:make|afford|pay)\s+(?:the|their|his|her|my)\s+(?:mortgage|rent|bills)\b"
               r"|pagare il mutuo|\bleft in savings\b|\bpay cut\b"),
    (SEX_LIFE, r"\bopen marriage\b|\bunprotected sex\b|\btrying for a baby\b|\bovulation\b|relaciones sexuales"
               r"|rapports sexuels|\b(?:uses?|using|on) (?:grindr|her app|scruff|feeld)\b"
               # a woman's wife, a man's husband: "runs a bakery with her wife", "has a boyfriend and is a man"
               r"|\bher (?:wife|girlfriend)\b|\bhis (?:husband|boyfriend)\b"
               r"|\b(?:boyfriend|husband)\b[^.]{0,40}\b(?:is|as) a (?:man|guy)\b"
               r"|\b(?:girlfriend|wife)\b[^.]{0,40}\b(?:is|as) a (?:woman|girl)\b"
               r"|\b(?:is|as) a (?:man|guy) with a (?:boyfriend|husband)\b"
               r"|\b(?:is|as) a woman with a (?:girlfriend|wife)\b"
               r"|\b(?:ist|bin|est|es|é|è|sou|soy|jest)\s+(?:\w+\s+)?(?:lesbisch|schwul|bisexuell|gay|lesbienne"
               r"|lesbiana"
               r"|lésbica|lesbica|bisexual|bissexual|bisessuale|pansexuel|pansexual|homosexuel|homosexual"
               r"|omosessuale|queer|asexuel|asexual)\b"),
)
# The model's own mark for these categories, however it words it (`sensitive.marked_category`).
SPECIAL_MARK_WORDS: dict[str, str] = {
    **dict.fromkeys(("recovery", "addiction recovery", "recovery and addiction", "substance use", "sobriety"),
                    RECOVERY),
    **dict.fromkeys(("organ donation", "organ donor", "transplant", "organ transplant"), ORGAN_DONATION),
    **dict.fromkeys(("criminal record", "criminal", "criminal history", "conviction", "convictions", "criminal offence",
                     "offences"), CRIMINAL_RECORD),
    **dict.fromkeys(("immigration", "immigration status", "visa", "residency", "asylum", "citizenship"), IMMIGRATION),
    **dict.fromkeys(("gender identity", "gender", "transgender"), GENDER_IDENTITY),
    **dict.fromkeys(("trade union", "trade union membership", "trade-union membership", "union membership",
                     "union"), TRADE_UNION),
    **dict.fromkeys(("genetic", "genetics", "genetic data", "dna"), GENETIC),
    **dict.fromkeys(("biometric", "biometrics", "biometric data"), BIOMETRIC),
}
SPECIAL_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (category, re.compile(pattern, re.IGNORECASE)) for category, pattern in _PATTERNS
)
