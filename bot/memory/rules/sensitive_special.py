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
    r"|nea|aft|rcn|bma|usdaw|equity|solidarność|fnv|cisl|cgil|afl-cio|sag-aftra|iatse|ibew|ufcw|afscme|cwa|usw"
    r"|unite here|nnu|nalc|apwu|ilwu|atu|twu|uft|cupe|unifor|opseu|psac|cfmeu|meaa|anmf|nut|nuj|bectu|fbu|nipsa"
    r"|siptu|fórsa|inmo|eis|naht|bfawu|musicians' union|ig bce|gew|evg|ngg|uil|fiom|unsa|fsu|cnv|acv|abvv|opzz|znp"
    r"|dgb|ilo)"
)
_SUBSTANCE = (
    r"(?:cocaine|heroin|meth|crack|opioids|opiates|painkillers|weed|cannabis|drugs|smoking|cigarettes|vaping|booze"
    r"|alcohol|drink|drinking|gambling|ketamine|benzos)"
)
_VERBS_OF_GIVING = (
    r"(?:enrolled|registered|gave|given|provided|submitted|shared|linked|had|took|taken|uploaded|exported|stored)"
)
_OFFENCES = (
    r"(?:possession|burglary|robbery|theft|shoplifting|assault|battery|fraud|embezzlement|arson|vandalism"
    r"|criminal damage|drink[- ]driving|drunk[- ]driving|dui|dwi|drug dealing|dealing|trafficking|manslaughter|murder"
    r"|stalking|harassment|domestic (?:violence|abuse)|affray|public order|breach of the peace|joyriding"
    r"|handling stolen goods|tax evasion|money laundering|forgery|perjury|gbh|abh|actual bodily harm"
    r"|grievous bodily harm|indecent exposure|sexual assault|rape|trespass|dangerous driving|benefit fraud|car theft"
    r"|drugs?|cannabis|weed|cocaine|heroin|mugging|a (?:fight|bar fight|brawl))"
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
               rf"|\b(?:\w+ )?(?:days?|weeks?|months?|years?) (?:clean|sober)\b"
               rf"|\b(?:clean|sober) (?:for|since) (?:\w+ ){{0,2}}?(?:days?|weeks?|months?|years?)\b"
               rf"|\bstint in rehab\b|\b(?:in|out of"
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
                     r"|\btrasplante\b|\btransplante\b|transplantation|trapianto|greffe|臓器移植|器官移植|肾移植|腎移植|肝移植|心脏移植|移植手術|移植を受"
                     r"|移植待ち|이식 수술|이식을 받|신장 ?이식|간이식|간 이식|donneur d'organes"
                     r"|donante de órganos"
                     r"|organspender\w*|dador de órgãos|doador de órgãos"),
    (CRIMINAL_RECORD, r"\bcriminal record\b(?!\s+checks?\b)|\bconvicted\b|\bconvictions?\b|\bcriminal charges?\b"
                      r"|\b(?:served|did|spent)\s+(?:\w+\s+){0,3}(?:in|behind)\s+(?:prison|jail|bars)\b"
                      r"|\b(?:went to|released from|got out of|out of|in)\s+(?:prison|jail|juvie)\b"
                      r"|\bprobation\b(?!\s+(?:period|officers?|service|workers?)\b|ary)"
                      r"|\b(?:their|his|her|my) probation officer\b|\bparole\b|\bankle (?:tag|monitor)\b"
                      r"|\bcurfew order\b"
                      r"|\bsuspended sentence\b|\bcommunity service (?:for|order|sentence)\b"
                      r"|\b(?:pending|facing)\s+(?:an? )?(?:\w+ )?charges?\b|\bcourt date\b|\bon bail\b"
                      r"|\b(?:assault|fraud|theft|burglary|drugs?|dui|dwi|drink[- ]driving|drunk[- ]driving"
                      r"|shoplifting)"
                      r"\s+(?:charge|conviction|arrest|offen[cs]e)s?\b|\bcaution from the police\b|\barrested for\b"
                      r"|\bsex offenders? register\b|\bspent conviction\b|vorstrafe|vorbestraft|\bim gefängnis\b|cárcel"
                      r"|\bprisión\b|de la prison|en prison|\bprisão\b|\bin carcere\b|libertad condicional"
                      r"|前科|服刑|坐牢|刑務所|교도소|전과"),
    (IMMIGRATION, r"\b(?:asylum(?!\s+seekers\b)|refugee status|refugee claim|leave to remain|indefinite leave"
                  r"|settled status"
                  r"|pre-settled status|green card|permanent residen(?:cy|ce)|residence permit|residency permit"
                  r"|work permit|daca|undocumented|overstayed|deportation|deported|citizenship application"
                  r"|naturali[sz]ation (?:application|ceremony|interview)|home office caseworker|immigration (?:status"
                  r"|hearing|case|appeal|detention))\b|\bon an? (?:[\w-]+[\s-]){0,3}visa\b"
                  r"|\bvisa (?:hearing|interview|application|status|expires|runs out|renewal|that runs out)\b"
                  r"|\b(?:student|work|tourist|spouse|skilled worker|visitor|h-1b|h1b|working holiday) visa\b"
                  r"|permiso de residencia|autorização de residência|autorización de residencia|solicitud de asilo"
                  r"|asylantrag|aufenthaltserlaubnis|aufenthaltstitel|titre de séjour"
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
                r"\b(?:on file|registered|linked|enrolled|stored|taken|scanned|held|kept|collected|recorded"
                r"|saved|captured|on record)\b|\bwith a (?:face|iris|palm) scan\b"),
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
# Indirect and compound wordings of these categories: a record for an offence, a keytag, a kidney given, a test's
# finding, the user as a refugee or visa holder, a union named by its name, a queer group the user belongs to.
_INDIRECT: tuple[tuple[str, str], ...] = (
    (CRIMINAL_RECORD, rf"\b(?:has|had|got|gets|with|given)\s+(?:an? )?(?:criminal |police |prior )?(?:record|caution"
                      rf"|conviction|warning|sentence|ban)\s+(?:on (?:file|record)\s+)?for\s+(?:\w+\s+){{0,2}}?"
                      rf"{_OFFENCES}\b"
                      rf"|\b(?:cautioned|arrested|charged|convicted|jailed|imprisoned|sentenced|nicked|busted|locked up"
                      rf"|did time|served time|doing time|serving time|did \w+ (?:years?|months?|weeks?)"
                      rf"|served \w+ (?:years?|months?|weeks?))\s+(?:\w+\s+){{0,3}}?(?:for|with|over)\s+"
                      rf"(?:\w+\s+){{0,2}}?"
                      rf"{_OFFENCES}\b"
                      r"|\bpolice caution\b|\b(?:did|doing|served|serving) time\b(?!\s+(?:trials?|as)\b)"
                      r"|\bex-?(?:con|offender|prisoner|convict)s?\b|\bformer (?:inmate|prisoner|convict|offender)\b"
                      r"|\bon remand\b|\b(?:is|was|released|out) on licen[cs]e\b|\belectronic tag\b"
                      r"|\bcommunity order\b|\b(?:got|has|had|gets) (?:an? )?(?:dui|dwi|drink[- ]driving"
                      r" (?:charge|ban)|driving ban for)\b|\brestraining order against (?:them|him|her|me)\b"),
    (RECOVERY, r"\b(?:\d+|thirty|sixty|ninety|one|six|nine)[- ](?:day|month|year)s?\s+(?:keytag|key tag|chip|coin"
               r"|medallion|token)\b|\b(?:keytag|key tag|sobriety (?:chip|coin|date|birthday|milestone)|clean date)\b"
               r"|\b(?:attends?|attending|goes to|going to|went to|meetings? (?:at|of)|keytag at|chip at)\s+"
               r"(?=(?-i:AA|NA))(?:aa|na)\b"
               r"(?!\s+(?:member|patrol|breakdown|cover|insurance|roadside|van|batter\w*|gill)\b)"),
    (ORGAN_DONATION, r"\b(?:gave|donated|donating|giving|give|gives)\s+(?:part of |one of |half of |a lobe of )?"
                     r"(?:an? |their |his |her |my )?(?:kidneys?|liver|lungs?|bone marrow|stem cells|cornea)\b"
                     r"|\b(?:got|received|has|had|getting|gets|needs?|waiting for)\s+(?:an? |their )?(?:new|donor"
                     r"|donated|transplanted)\s+(?:kidney|liver|lungs?|heart|pancreas|cornea)s?\b"
                     r"(?!\s+(?:rate|monitor)\b)|\bliving (?:kidney |liver )?donor\b"
                     r"|\breceived (?:an? )?(?:kidney|liver|lung|heart) from\b"),
    (GENETIC, r"\b(?:23andme|ancestrydna|ancestry dna|myheritage|dna test|genetic test|gene test|genome test"
              r"|genetic screening|genetic panel|genome sequencing|carrier screening|exome sequencing)(?:s|ing)?\b"
              r"[^.;]{0,60}?\b(?:showed|shows|found|revealed|confirmed|flagged|came back|says|said|results?|risk"
              r"|carrier|positive|mutation|variant|marker|gene)\b"
              r"|\b(?:found|detected|identified|diagnosed|confirmed|picked up) (?:by|through|via|in) (?:a )?(?:genetic"
              r"|gene|dna) test\w*\b|\binherited (?:\w+\s+){0,2}?(?:condition|disorder|disease|mutation|syndrome|risk"
              r"|gene)\b|\b(?:apoe-?e?4|apoe ?ε4|mthfr|hla-b27|fragile x|tay-sachs|g6pd deficiency|cftr)\b"),
    (IMMIGRATION, r"\b(?:is|was|am|are|came (?:\w+ ){0,4}?as|arrived (?:\w+ ){0,4}?as|registered as"
                  r"|recogni[sz]ed as|granted \w+ as|lives as|['’]m|['’]re)\s+(?:an? )?(?:\w+ )?"
                  r"(?:refugee|asylum[- ]seeker"
                  r"|stateless(?: person)?|undocumented (?:immigrant|migrant)|illegal (?:immigrant|alien)"
                  r"|migrant worker|dreamer|daca recipient|overstayer)\b(?!\s+(?:caseworker|lawyer|advocate|charity"
                  r"|support|officer|worker|centre|center|camp|volunteer)\b)"
                  r"|\bfled (?:from )?(?:(?:their|his|her|my) (?:home )?country|the (?:war|fighting|regime|taliban"
                  r"|persecution)|syria|ukraine|afghanistan|eritrea|sudan|iran|iraq|somalia|yemen|myanmar|venezuela"
                  r"|russia|belarus|gaza|palestine|congo|south sudan|ethiopia|libya|hong kong)\b"
                  r"|\b(?:holds?|has|have|had|got|on|applying for|applied for|renew\w*|waiting (?:on|for)|granted"
                  r"|getting|extend\w*)\s+(?:an? |their |his |her |my )?(?:[\w-]+\s+){0,2}?(?:visa|residence permit"
                  r"|work permit|brp|biometric residence permit|ilr|settled status|green card"
                  r"|temporary protected status"
                  r"|tps|humanitarian parole|blue card|h-1b|l-1|o-1|f-1|j-1|tn status|e-2)\b"
                  r"(?!\s+(?:card|debit|credit|points|rewards|to (?:visit|travel|go)|for (?:a |the |their )?(?:trip"
                  r"|holiday|vacation|visit|honeymoon))\b)"
                  r"|\b(?:became|becoming|become) an? (?:\w+ )?citizen\b|\bnaturali[sz]ed\b"),
    (TRADE_UNION, rf"\b(?:is in|joined|member of|belongs to|active in)\s+(?:the\s+)?{_UNIONS}\b"
                  r"|\b(?:member of|joined|belongs to|active in|rep for|dues to)\s+(?:the|their|a)\s+"
                  r"(?:[\w'-]+\s+){0,2}?(?<!credit )(?<!student )(?<!students' )(?<!european )(?<!rugby )"
                  r"(?<!oxford )(?<!cambridge )(?<!soviet )(?<!customs )union\b(?!\s+(?:bar|station|street|square"
                  r"|jack|flag|building|chapel|hall|canal)\b)"),
    (SEX_LIFE, r"\b(?:goes to|going to|attends?|attending|went to|member of|joined|runs|plays (?:\w+ )?(?:in|for)"
               r"|sings (?:in|with)|part of|belongs to|dances (?:in|with))\s+(?:an? |the |their )?(?:[\w'-]+\s+){0,2}?"
               r"(?:queer|gay|lesbian|lgbt\w*\+?|bi|bisexual|trans|sapphic|pride)\s+(?:[\w']+\s+){0,2}?(?:book club"
               r"|club|group|choir|chorus|night|support group|team|league|bar|sauna|network|society|meetup"
               r"|collective|circle)\b"),
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
    (category, re.compile(pattern, re.IGNORECASE)) for category, pattern in (*_PATTERNS, *_INDIRECT)
)
