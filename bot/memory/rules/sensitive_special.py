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

# An amount of money: "$40k", "£23,000", "3 grand", "800 quid", "2 million".
MONEY = (
    r"(?:[$€£¥₹]\s?\d[\d,.]*\s?(?:k|m|million|grand)?"
    r"|\d[\d,.]*\s?(?:k|m|grand|thousand|million|dollars|euros|pounds|quid|bucks|usd|eur|gbp|[€$£]))"
)
_UNIONS = (
    r"(?:unite|unison|gmb|rmt|neu|nasuwt|teamsters|ver\.di|ig metall|cgt|ccoo|ugt|cfdt|aslef|cwu|pcs|ucu|seiu|uaw"
    r"|nea|aft|rcn|bma|usdaw|equity|solidarność|fnv|cisl|cgil|afl-cio|sag-aftra|iatse|ibew|ufcw|afscme|cwa|usw"
    r"|unite here|nnu|nalc|apwu|ilwu|atu|twu|uft|cupe|unifor|opseu|psac|cfmeu|meaa|anmf|nut|nuj|bectu|fbu|nipsa"
    r"|siptu|fórsa|inmo|eis|naht|bfawu|musicians' union|ig bce|gew|evg|ngg|uil|fiom|unsa|fsu|cnv|acv|abvv|opzz|znp"
    r"|dgb|ilo|iww|industrial workers of the world|ucatt|tssa|napo|poa|rcm|prospect|community union|nasuwt|eis"
    r"|ufw|wga|writers guild|ibt|afge|nteu|opeiu|nabet|aftra|osstf|etfo|bctf|ftq|csn|csq|cosatu"
    r"|numsa|nehawu|kctu|fktu|rengo|zenroren|actu|amwu|nzno|etu|cgtp|ctm|força sindical|cnt"
    r"|csif|intersindical|snes|snuipp|cfe-cgc|uilm|filcams|fp cgil|nidil|abvv|acv|aclvb|3f"
    r"|unionen|ig bau|ig metall|verdi|dbb|gdl|marburger bund|ndsz|fnv|cnv|unia|syna|vpod|ssp|ostfront|ozzip"
    r"|solidarnosc|nszz|nurses'? union|teachers'? union|dockers'? union|miners'? union|firefighters'? union"
    r"|bakers'? union|postal union|ctw|change to win|workers united)"
)
_SUBSTANCE = (
    r"(?:cocaine|heroin|meth|crack|opioids|opiates|painkillers|weed|cannabis|drugs|smoking|cigarettes|vaping|booze"
    r"|alcohol|drink|drinking|gambling|ketamine|benzos|coke|pills|mdma|ecstasy|molly|pot|smack|spice"
    r"|opium|oxy|oxycontin|oxycodone|fentanyl|xanax|valium|crystal meth|methamphetamine|amphetamines?"
    r"|the (?:booze|bottle|drink|needle|pipe|pills|slots|horses)|nicotine|tobacco|betting|slots"
    r"|pokies|porn|ghb|kratom|sleeping pills|codeine|tramadol|uppers|downers)"
)
_VERBS_OF_GIVING = (
    r"(?:enrolled|registered|gave|given|provided|submitted|shared|linked|had|took|taken|take|takes|uploaded|exported"
    r"|stored|recorded|scanned)"
)
_OFFENCES = (
    r"(?:possession|burglary|robbery|theft|shoplifting|assault|battery|fraud|embezzlement|arson|vandalism"
    r"|criminal damage|drink[- ]driving|drunk[- ]driving|dui|dwi|drug dealing|dealing|trafficking|manslaughter|murder"
    r"|stalking|harassment|domestic (?:violence|abuse)|affray|public order|breach of the peace|joyriding"
    r"|handling stolen goods|tax evasion|money laundering|forgery|perjury|gbh|abh|actual bodily harm"
    r"|grievous bodily harm|indecent exposure|sexual assault|rape|trespass|dangerous driving|benefit fraud|car theft"
    r"|drugs?|cannabis|weed|cocaine|heroin|mugging|a (?:fight|bar fight|brawl)|supplying|supply|intent to supply"
    r"|carrying a (?:knife|blade|weapon)|possession of (?:a )?(?:knife|weapon|offensive weapon|firearm)"
    r"|insider trading|bribery|extortion|blackmail|kidnapping|hacking|identity theft|cybercrime|smuggling"
    r"|receiving stolen goods|wounding|violent disorder|criminal damage|threatening behaviou?r|drink[- ]driving"
    r"|speeding|driving (?:while|without) \w+|dealing drugs|selling drugs|growing (?:cannabis|weed)"
    r"|(?:an? )?(?:violent|sexual|serious|drugs?|driving|public order|firearms?|weapons?) offen[cs]es?"
    r"|a (?:robbery|burglary|stabbing|shooting|hit and run|hit-and-run|riot)|rioting|looting|(?:tax|vat|benefit"
    r"|insurance|mortgage|bank) fraud|evasion)"
)
_BIOMETRICS = (
    r"(?:fingerprints|fingerprint template|face scan|facial scan|iris(?: scan)?|retina(?:l)? scan"
    r"|palm[- ]vein(?: scan)?"
    r"|palm ?print|voiceprint|voice ?print|voice sample|voice id|voice biometrics|faceprint|face photo|dna sample"
    r"|biometrics?|biometric data|(?:fingerprint|face|facial|iris|palm|voice|retina|vein|hand) templates?"
    r"|templates? of (?:their|his|her|my) (?:fingerprints?|face|iris|irises|palms?|voice|retinas?|veins?)"
    r"|world id|worldcoin|amazon one)"
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
                      r"|\b(?:served|did|spent)\s+(?:\w+\s+){0,4}(?:in|behind)\s+(?:prison|jail|bars)\b"
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
              r"|gene|dna) test\w*\b|\binherited (?:\w+\s+){0,3}?(?:condition|disorder|disease|mutation|syndrome|risk"
              r"|repeat"
              r"|variant|allele"
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
    (TRADE_UNION, rf"\b(?:is in|been in|joined|member of|belongs to|active in|out with)\s+(?:the\s+)?{_UNIONS}\b"
                  r"(?!\s+(?:research|markets?|trading|finance|sales|capital|funds?|analysis|release))"
                  rf"|\b{_UNIONS}\s+(?:subs|dues|ballot)\b|\btuc (?:march|rally|conference)\b"
                  r"|\b(?:with|in|from|by|for|to) (?:their|his|her|my|our) union\b(?!\s+(?:jack|flag))"
                  r"|\bunion (?:meeting|drive|pin|badge)s?\b"
                  r"|\b(?:organi[sz]\w*|lead|leads|led|leading|helped|help(?:s|ing)?|trying|tried|tries|start(?:s|ed|ing)?"
                  r"|push(?:es|ed|ing)?)\s+(?:to\s+)?(?:(?!(?:on|about|of|against|into)\b)\w+\s+){0,4}?"
                  r"(?:unioni[sz](?:e|ed|ing|ation)|union drive)\b"
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
# Families of wordings, each a vocabulary of its own rather than one sentence: what people say of a pregnancy, a
# device they carry, an assessment they wait for, a custody they served, an immigration procedure of their country,
# a movement they march with, a union role they hold, a biometric template kept of them.
_DURATION = r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|eighteen|twenty|a few|several)"
_CUSTODY = (
    r"(?:prison|jail|gaol|bars|custody|juvie|borstal|(?:an? |the )?(?:young offenders'? (?:institution|institute|unit"
    r"|centre|center)|yoi|juvenile (?:detention|hall|facility|jail)|youth detention|detention cent(?:re|er)"
    r"|correctional (?:facility|institution|cent(?:re|er))|penitentiary|federal prison|state prison|county jail"
    r"|secure (?:unit|training centre))|hmp \w+|the (?:nick|clink|slammer|big house))(?!\s+of\b)"
)
_MOVEMENTS = (
    r"(?:extinction rebellion|xr|just stop oil|insulate britain|black lives matter|blm|antifa|proud boys|momentum"
    r"|sunrise movement|fridays for future|letzte generation|ende gelände|gilets jaunes|palestine action"
    r"|palestine solidarity campaign|stop the war(?: coalition)?|cnd|campaign for nuclear disarmament"
    r"|stand up to racism|britain first|edl|english defence league|patriotic alternative|tea party|turning point"
    r"|moms for liberty|young (?:conservatives|labour|republicans|democrats|greens|liberals)|jusos|junge union"
    r"|college (?:republicans|democrats)|occupy|women'?s march|pro-palestine|pro-israel|free palestine"
    r"|maga|reform uk|dsa|snp|plaid cymru|sinn f[eé]in|ukip|afd|rassemblement national|la france insoumise)"
)
_FAMILIES: tuple[tuple[str, str], ...] = (
    # pregnancy: expecting, weeks along, the scans and tests, the due date
    (HEALTH, r"\bexpecting (?:a baby|a (?:boy|girl)|twins|triplets|(?:their|her|his|my|our) (?:first|second|third"
             r"|fourth|\w+ (?:baby|child)))\b|\bpregnant with\b|\b(?:\d+|\w+)[- ]weeks? (?:pregnant|along)\b"
             r"|\b(?:\d+|twelve|twenty|thirty)[- ]week (?:scan|ultrasound|appointment|check)\b"
             r"|\b(?:dating|anomaly|nuchal|pregnancy|early pregnancy|baby|growth) scan\b|\bpositive pregnancy test\b"
             r"|\bpregnancy test (?:came back |was )?positive\b|\bmorning sickness\b|\bhyperemesis\b"
             r"|\bantenatal (?:class\w*|appointments?|care|clinic|scan)\b|\b(?:their|her|my) (?:due date|baby is due)\b"
             r"|\bbaby (?:is|was) due\b|\bgave birth\b|\bfroze (?:their|her|my) eggs\b|\begg[- ]freezing\b"
             r"|\b(?:on|started|starting|taking) (?:maternity|paternity) leave\b|\bmiscarried\b"
             r"|\b(?:first|second|third) trimester\b|\bembryo transfer\b|\biui\b|\bbirth plan\b"),
    # devices and aids the user has, carries or wears
    (HEALTH, r"\b(?:has|have|had|got|with|carr(?:y|ies|ying|ied)|keeps?|wears?|wearing|uses?|using|needs?|relies on"
             r"|fitted with|lives with|changes? (?:their|his|her|my))\s+(?:an? |two |three |a spare |their |his |her "
             r"|my |new |a new |permanent |temporary )?(?:[\w-]+\s+)?(?:epi-?pens?|auto-?injectors?|inhalers?"
             r"|insulin (?:pens?|pump)|glucose monitor|cgm|libre (?:sensor|patch)|dexcom|stoma(?: bag)?|colostomy"
             r"(?: bag)?|ileostomy(?: bag)?|urostomy|catheter|pacemaker|defibrillator|icd|hearing (?:aids?|implant)"
             r"|cochlear implants?|prosthe(?:sis|tic (?:leg|arm|limb|hand|foot|eye))|feeding tube|peg tube"
             r"|oxygen (?:tank|concentrator|cylinder)|tens machine|cpap(?: machine| mask)?|walking stick|crutches"
             r"|mobility scooter|wheelchair|rollator|hearing loop|medical alert (?:bracelet|necklace)"
             r"|medic alert|port[- ]a[- ]cath|picc line|shunt|stent|ostomy|nebuli[sz]er|splint|neck brace"
             r"|back brace|knee brace|compression stockings)\b"),
    # assessments, referrals and diagnostic pathways
    (HEALTH, r"\b(?:waiting list|wait(?:ing)?[- ]list|referr(?:ed|al)|assess(?:ed|ment)|screen(?:ed|ing)"
             r"|evaluat(?:ed|ion)|tested|test(?:ed)? positive)\s+(?:\w+\s+){0,2}?(?:for|to)\s+(?:an? |the |their "
             r"|possible |suspected |an? possible )?(?:adult |nhs |private |formal )?(?:autism|asd|adhd|add"
             r"|dyslexia|dyspraxia|dyscalculia|bipolar|ptsd|ocd|dementia|memory|cancer|hiv|stis?|stds?|chlamydia"
             r"|diabetes|endometriosis|pcos|epilepsy|ms|sleep apnoea|sleep apnea|narcolepsy|coeliac|celiac|crohn'?s"
             r"|lupus|long covid|menopause|fertility|infertility|ivf|eating disorders?|anorexia|gender dysphoria"
             r"|a (?:colonoscopy|biopsy|mammogram|mri|ct scan|lumbar puncture|hip replacement|knee replacement"
             r"|transplant|hysterectomy)|surgery|an operation|(?:the )?(?:memory|pain|sleep|fertility|gender"
             r"|sexual health|eating disorder|ivf|menopause|epilepsy|diabetes|cancer|breast|chest|cardiac|heart"
             r"|neurology|rheumatology|psychiatric|mental health|addiction|drug|alcohol|methadone|colposcopy|gum"
             r"|hiv|migraine|headache|allergy|fracture) (?:clinic|team|service|unit|specialist|consultant)"
             r"|(?:a |the )?(?:oncologist|psychiatrist|neurologist|cardiologist|rheumatologist|gastroenterologist"
             r"|endocrinologist|urologist|gyn(?:a)?ecologist|ha?ematologist|nephrologist|hepatologist|pulmonologist"
             r"|immunologist|allergist|psychologist|neurosurgeon|camhs|cmht|iapt|crisis team))\b"
             r"(?!\s+(?:coordinator|administrator|receptionist|manager|nurse|practitioner|team lead))"
             r"|\b(?:an?|their|his|her|my)\s+(?:autism|asd|adhd|dyslexia|dyspraxia|dementia|cancer|bipolar|ptsd"
             r"|ocd|memory) (?:assessment|diagnosis|referral|evaluation|screening)\b"
             r"(?!\s+(?:coordinator|administrator|service|team|clinic|tool|company|business)\b)"
             r"|\b(?:an?|their|his|her|my) (?:appointment|consultation|check-?up|follow-?up|review|scan)\s+"
             r"(?:\w+\s+){0,2}?(?:at|with|in)\s+(?:the|a|an|their|his|her|my)\s+(?:\w+\s+)?(?:memory|pain|sleep"
             r"|fertility|gender|sexual health|eating disorder|ivf|menopause|epilepsy|diabetes|cancer|breast|cardiac"
             r"|heart|neurology|rheumatology|psychiatric|mental health|addiction|methadone|colposcopy|hiv|migraine"
             r"|oncology|haematology|hematology|renal|dialysis|maternity|antenatal) (?:clinic|team|unit|ward"
             r"|service|specialist|consultant)\b"),
    # operations and procedures after "since", "before", "booked in for"; mental-health crises
    (HEALTH, r"\b(?:since|before|ahead of|booked in for|booked for|going in for|off work (?:after|for)|signed off"
             r"(?: work)? (?:after|with|for)|post-?op from|healing from|recuperating from)\s+(?:an? |the |their |his "
             r"|her |my )?(?:[\w-]+ ){0,2}?(?:surgery|operation|op|bypass|gastric (?:sleeve|band)|transplant"
             r"|mastectomy|hysterectomy|lumpectomy|chemo(?:therapy)?|radiotherapy|stroke|heart attack|breakdown"
             r"|diagnosis|miscarriage|c-section|caesarean|replacement|amputation|biopsy|transfusion|overdose"
             r"|suicide attempt|seizure)\b"
             r"|\b(?:had|has had|underwent|recovering from|after)\s+(?:an? |the |their |his |her |my )?(?:emergency "
             r"|keyhole |major |minor |routine )?(?:[\w-]+ )?(?:operation|op) (?:on (?:their|his|her|my) \w+|to"
             r" (?:remove|repair|fix))\b|\b(?:had|has had|underwent) (?:an? |their )?(?:emergency |keyhole |major "
             r"|minor )?(?:[\w-]+ )?operation\b"
             r"|\b(?:was|been|got|being) sectioned\b|\bsectioned under\b|\bsuicide attempt\b|\battempted suicide\b"
             r"|\btried to (?:kill|end) (?:themselves|themself|himself|herself|myself|their life|his life|her life"
             r"|my life)\b|\bself-?harm(?:s|ed|ing)?\b(?!\s+(?:charity|awareness|prevention|research|support"
             r"|service|team|training)\b)|\b(?:psych|psychiatric|mental health) (?:ward|unit|hospital)\b(?<!works)"
             r"|\b(?:an? |the )?(?:inpatient|day patient|outpatient) (?:at|in) (?:the |a )?(?:\w+ )?(?:psychiatric"
             r"|mental health|eating disorder|priory)\b|\bthe priory\b|\bon (?:antidepressants|lithium|insulin"
             r"|chemo|dialysis|oxygen|a waiting list for)\b"),
    # gender identity: legal gender, markers, binding, pronouns
    (GENDER_IDENTITY, r"\bgender marker\b|\blegal gender\b|\bgender recognition certificate\b"
                      r"|\b(?:got|has|have|applied for|applying for|received) (?:an? |their |his |her |my )?grc\b"
                      r"|\bbinds? (?:their|his|her|my) chest\b|\b(?:wears?|wearing|bought|got) (?:an? )?(?:chest )?"
                      r"binder\b|\b(?:goes by|uses?|prefers?|asks? for|changed (?:their|his|her|my) pronouns to)\s+"
                      r"(?:they/them|she/they|he/they|they/she|they/he|xe/\w+|ze/\w+|it/its|any pronouns)\b"
                      r"|\b(?:is |was )?(?:afab|amab|assigned (?:female|male) at birth)\b"
                      r"|\bgender[- ]affirming (?:care|surgery|hormones|treatment)\b|\bsocially transitioned\b"
                      r"|\b(?:came|coming) out as (?:trans|non-?binary|genderqueer|genderfluid|agender|a trans)\b"
                      r"|\bagender\b|\bdetransition\w*\b|\bchanged (?:their|his|her|my) (?:name and )?gender\b"),
    # sexual orientation in short forms, queer dating apps and sites, adult content of their own
    (SEX_LIFE, r"\b(?:came out|coming out|comes out|identif(?:y|ies|ied) as|out as)\s+(?:an? )?(?:pan|ace|aro"
               r"|demi|demisexual|demiromantic|gr[ae]ysexual|sapphic|polysexual|omnisexual|queer|gay|lesbian|bi"
               r"|bisexual|pansexual|asexual|aromantic|questioning|homoflexible|heteroflexible)\b"
               r"|\b(?:is|am|['’]m|are)\s+(?:an? )?(?:demisexual|demiromantic|gr[ae]ysexual|polysexual|omnisexual"
               r"|homoflexible|heteroflexible|sapphic)\b"
               r"|\b(?:queer|gay|lesbian|bi|lgbtq?\+?|sapphic|trans)\s+dating (?:apps?|sites?)\b"
               r"|\bdating apps? (?:for|aimed at) (?:\w+ )?(?:queer|gay|lesbian|bi|lgbtq?\+?|sapphic|trans) \w+"
               r"|\b(?:on|uses?|using|swip\w+ on|dates? on|profile on|met \w+ on)\s+(?:grindr|hornet|jack'?d|taimi"
               r"|lex|scruff|romeo|planetromeo|growlr|feeld|her app|chappy)\b"
               r"|\b(?:has|runs|started|posts (?:on|to)|makes? money (?:on|from)|sells \w+ on|earns? \w+ (?:on|from)"
               r"|content on|creator on)\s+(?:an? |their |his |her )?(?:onlyfans|fansly|justforfans|chaturbate"
               r"|manyvids)\b|\b(?:is|works as) an? (?:cam ?girl|cam ?boy|cam model|escort|sugar baby|dominatrix"
               r"|stripper)\b"),
    # religion: places and practices of many faiths, scripture read daily
    (RELIGION, r"\b(?:goes to|going to|attends?|attending|attended|been attending|went to|never misses|worships at"
               r"|member of|belongs to|frequents)\s+(?:\w+\s+){0,2}?(?:terreiro|candombl[eé]|umbanda|santer[ií]a|vodou"
               r"|voodoo|kingdom hall"
               r"|meeting house|quaker meeting|ashram|sangha|dharma cent(?:re|er)|mandir|masjid|gurdwara|satsang"
               r"|zendo|parish|congregation|kirk|chapel|shrine|mass|church|mosque|synagogue|temple|shul"
               r"|bible study|prayer meeting|prayer group|jummah|friday prayers?|shabbat services?|sunday services?"
               r"|evensong|vespers|liturgy|novena|rosary|iftar|torah study)\b(?!\s+(?:architecture|tours?|concerts?"
               r"|café|cafe|car park|fair|sale|quiz|weddings?|funerals?|christenings?|hall|fete)\b)"
               r"|\b(?:reads?|reading|recites?|reciting|studies|memori[sz]\w+)\s+(?:the\s+|a\s+)?(?:quran|qur'?an"
               r"|koran|bible|torah|talmud|gita|bhagavad gita|guru granth sahib|scriptures?|psalms?|rosary)\s+"
               r"(?:\w+\s+)?(?:every|each|daily|nightly|before|at)\b"
               r"|\bfast(?:s|ing|ed)? (?:in|through) (?:ramadan|lent)\b|\b(?:did|doing|went on|made|performed)\s+"
               r"(?:the\s+|their\s+|an?\s+)?(?:hajj|umrah)\b|\b(?:takes?|took|receives?) (?:holy )?communion\b"
               r"|\b(?:lays?|laying|wears?) tefillin\b|\bdavens\b|\b(?:was|got|being) (?:confirmed|baptised|baptized"
               r"|christened) (?:in|into|at|as)\b|\b(?:is|was) (?:an? )?(?:lay preacher|deacon|church elder|elder at"
               r"|altar server|lay minister|churchwarden|sunday school teacher)\b"),
    # politics: movements and acts of support, rallies, campaign merchandise
    (POLITICS, rf"\b(?:goes to|went to|going to|attends?|attended|joined|joins|marche[sd]|marching|marched with"
               rf"|protests? with|protested with|campaigns? with|demonstrat\w+ with|blockad\w+ with|member of"
               rf"|active in|involved (?:in|with)|organi[sz]es (?:for|with)|volunteers? (?:for|with)|donates? to"
               rf"|donated to|arrested (?:at|during|with)|been to|took part in|takes part in)\s+(?:\w+\s+){{0,3}}?"
               rf"{_MOVEMENTS}\s*(?:['’]s\s+)?(?:actions?|protests?|marches|march|rall(?:y|ies)|demos?|blockades?"
               rf"|meetings?|events?|vigils?|conferences?|hustings|branch|group|campaign)?\b"
               r"|\b(?:has|wears?|wearing|owns?|bought|put up|displays?)\s+(?:an? |their |his |her )?"
               r"(?:(?:framed|signed|red|old|vintage|new|official|autographed) )?(?:maga|trump"
               r"|kamala|harris|obama|biden|bernie|labour|tory|reform|lib dem|green party|snp|campaign|party)"
               r"\s+(?:hat|cap|t-shirt|shirt|badge|pin|yard sign|lawn sign|sticker|bumper sticker|poster|rosette"
               r"|flag|placard)s?\b"
               r"|\b(?:went to|goes to|attends?|attended|been to)\s+(?:\w+\s+){0,2}?(?:trump|maga|bernie|sanders"
               r"|obama|harris|biden|farage|corbyn|reform|labour|tory|party|campaign|election|political)"
               r"\s+(?:rall(?:y|ies)|conference|hustings|fundraisers?)\b"),
    # trade unions: roles, dues, ballots
    (TRADE_UNION, rf"\b(?:branch|chapel|local|regional|district|national|workplace|health and safety|learning"
                  rf"|equality|union)?\s*(?:secretary|chair|president|treasurer|officer|rep|representative|delegate"
                  rf"|convenor|steward|organi[sz]er|member)\s+(?:of|for|in|at|with)\s+(?:the\s+|their\s+|a\s+)?"
                  rf"(?:local\s+)?{_UNIONS}\b"
                  rf"|\b(?:pays?|paying|paid)\s+(?:\w+\s+){{0,2}}?(?:dues|subs|subscriptions?)\s+(?:to|for)\s+"
                  rf"(?:the\s+|their\s+)?(?:{_UNIONS}|(?:\w+\s+)?union)\b|\bunion (?:dues|subs)\b"
                  rf"|\bdues-paying\b|\b(?:strike ballot|balloted for strike|voted (?:yes )?(?:for|in favour of)"
                  rf" strike action|walked out with (?:the )?{_UNIONS})\b"
                  rf"|\b(?:ist|bin|sind|war|und|aktiv|engagiert sich|organisiert)\s+(?:\w+\s+){{0,2}}?(?:in der"
                  rf"|bei der|bei|im|in)\s+{_UNIONS}\b"),
    # criminal records: custody of any kind, a sentence served, a caution, an arrest
    (CRIMINAL_RECORD, rf"\b(?:served|did|spent|doing|serving)\s+(?:\w+\s+){{0,3}}?(?:in|behind|at)\s+{_CUSTODY}\b"
                      rf"|\b(?:went to|released from|got out of|out of|in|sent to|locked up in|time in)\s+{_CUSTODY}"
                      rf"(?<!\bin bars)(?<!\bof bars)(?<!\bto bars)\b"
                      rf"|\b(?:did|spent|served|doing|serving|got)\s+{_DURATION}\s+(?:years?|months?|weeks?|stretch)"
                      rf"\s+(?:inside|suspended|custodial)\b(?:\s+for\b|\s*(?:$|[.,;])|\s+(?:at|in)\s+)"
                      r"|\b(?:served|serving|given|got|handed|received)\s+(?:an? |their |his |her )?(?:\w+[- ])?"
                      r"(?:prison|jail|custodial|suspended|community|life) (?:sentence|term)\b"
                      r"|\b(?:got|given|received|accepted|has|had)\s+(?:an? )?(?:police |formal |conditional "
                      r"|simple |adult )?caution\b(?!\s+(?:from (?:the|a|their) (?:referee|ref|teacher|boss"
                      r"|manager|umpire)|for (?:a )?(?:foul|time-?wasting|dissent|diving)))"
                      r"|\b(?:was|got|been|were|being) (?:arrested|remanded|convicted|prosecuted|sentenced|jailed"
                      r"|imprisoned|incarcerated|locked up|bailed)\b"
                      r"|\b(?:pleaded|pled) (?:guilty|not guilty)\b|\bfound guilty\b|\bplea deal\b"
                      r"|\b(?:stood|went on|on|awaiting) trial\b|\b(?:appeared|appears|appearing|up) (?:at|in|before)"
                      r" (?:the )?(?:magistrates'?|crown|district|criminal|youth) court\b"
                      r"|\b(?:was |got )?(?:done|fined|banned|disqualified) (?:\w+ )?for\s+(?:\w+\s+){0,1}?"
                      rf"{_OFFENCES}\b|\bcommunity payback\b|\bunpaid work order\b|\b(?:on|wears?|wearing) a tag\b"),
    # immigration: tribunals, hearings and procedures of several countries
    (IMMIGRATION, r"\b(?:has|had|have|got|with|attending|attends?|before|facing|awaiting|waiting for|won|lost"
                  r"|appeal\w*|booked|preparing for|passed|failed|took|sat)\s+(?:an? |the |their |his |her |my )?"
                  r"(?:\w+\s+){0,2}?(?:immigration|asylum|visa|deportation|removal|citizenship|naturali[sz]ation"
                  r"|residency|green card|uscis|home office|ircc|border force|ice|settlement|spousal sponsorship"
                  r"|life in the uk)\s+(?:tribunal|hearing|court|appeal|interview|appointment|case|check-?in"
                  r"|reporting|bail|judge|decision|application|petition|sponsor(?:ship)?|lawyer|solicitor|test"
                  r"|ceremony|proceedings|biometrics)\b"
                  r"|\b(?:hearing|appeal|case|interview|appointment|check-?in)\s+(?:\w+\s+){0,2}?(?:at|with|before"
                  r"|in)\s+(?:the\s+)?(?:first-tier\s+)?(?:immigration|asylum|home office|uscis|ircc|border"
                  r"|ausländerbehörde|préfecture|extranjería)\b"
                  r"|\b(?:reports?|reporting|signs? (?:on|in)) (?:to|at) (?:the )?(?:home office|immigration|ice"
                  r"|reporting cent(?:re|er))\b|\bno recourse to public funds\b|\beu settlement scheme\b"
                  r"|\b(?:adjustment of status|i-485|i-130|i-765|express entry|pgwp|bridging visa|subclass \d{3}"
                  r"|removal proceedings|detention cent(?:re|er) for migrants|right to remain|ircc|uscis)\b"
                  r"|\b(?:has|had|got|their|his|her|my|before) (?:an? |the )?immigration (?:tribunal|bail|detention"
                  r"|hearing|lawyer|solicitor|interview|status|case|appeal|check-?in)\b"),
    # recovery: dry/clean for a while, programmes, residential rehab, detox, self-exclusion
    (RECOVERY, r"(?:^|(?<=\band )|(?<=\bbut )|(?<=\bwho )|(?<=\bthey )|(?<=\bi )|(?<=\bshe )|(?<=\bhe ))"
               r"(?:has been|have been|had been|['’]s been|been|stayed|staying|is|went|going)\s+(?:completely"
               r" |totally |stone[- ]cold )?(?:dry|clean|sober|abstinent|teetotal)\s+(?:for|since|off|from|of|now"
               r"|\d)\b"
               rf"|\b(?:clean|sober|dry|abstinent)\s+(?:off|from|of)\s+(?:\w+\s+)?{_SUBSTANCE}\b"
               r"|\bhas(?:n['’]t| not) (?:had a drink|had a drop|drunk|touched (?:a drop|alcohol|booze|drugs"
               rf"|{_SUBSTANCE})|used|gambled|placed a bet|had a bet|smoked|had a cigarette)\s+(?:\w+\s+){{0,2}}?"
               r"(?:since|in|for)\b"
               r"|\b(?:smart recovery|celebrate recovery|refuge recovery|recovery dharma|lifering|gamstop"
               r"|gamcare|cocaine anonymous|marijuana anonymous|crystal meth anonymous|debtors anonymous)\b"
               r"|\b(?:goes to|going to|attends?|attending|went to)\s+(?:\w+\s+){0,2}?recovery (?:meetings?|group"
               r"|caf[eé]|fellowship)\b"
               r"|\b(?:residential|inpatient|outpatient|\d+[- ]day|drug|alcohol|gambling|addiction) rehab\b"
               rf"|\brehab (?:for|to get off|after)\s+(?:\w+\s+)?{_SUBSTANCE}\b"
               r"|\b(?:medical|alcohol|drug|residential|home|opiate) detox\b|\bdetox (?:unit|cent(?:re|er)|clinic"
               r"|programme|program|ward)\b|\bself-?exclu(?:ded|sion) (?:from|on|with)\b"
               r"|\b(?:in|is in|been in) recovery (?:from|for)\b"),
    # genetic data: positive tests for a mutation, hereditary findings, a genome sequenced
    (GENETIC, r"\b(?:tested|test(?:ed)? came back|screened|came back)\s+positive\s+for\s+(?:the\s+|a\s+)?"
              r"(?:[\w'-]+\s+){0,3}?(?:gene|mutation|variant|allele|trait)\b"
              r"|\bpositive (?:\w+ )?test for (?:the |a )?(?:[\w'-]+\s+){0,3}?(?:gene|mutation|variant|allele"
              r"|trait)\b|\bhereditary\s+(?:[\w'-]+\s+){0,2}?(?:mutation|gene|variant)\b"
              r"|\b(?:had|got|has had) (?:their|his|her|my) (?:whole )?genome sequenced\b|\bpolygenic risk\b"
              r"|\b(?:saw|seeing|sees|referred to|appointment with) (?:a |the |their )?genetic counsel+or\b"
              r"|\bcarrier status\b|\b(?:is|was|['’]s) (?:a )?(?:genetic )?carrier (?:of|for)\b"),
    # biometric data: templates and enrolments kept of the user
    (BIOMETRIC, rf"\b(?:keeps?|kept|holds?|held|stores?|stored|has|have|saved|captured|collected|took|takes"
                rf"|records?|recorded|created|scanned|enrol+(?:s|ed)? in|signed up (?:for|to)|registered (?:for|with))"
                rf"\s+(?:an? |the |their |his |her |my )?{_BIOMETRICS}\s+(?:of|from|for)\s+(?:them|him|her|me"
                rf"|their|his|my)\b"
                r"|\b(?:scanned|registered|enrolled|gave|submitted)\s+(?:their|his|her|my)\s+(?:iris(?:es)?|eyes?"
                r"|retinas?|palms?|face|fingerprints?|voice|veins?)\s+(?:at|with|for|to|on|into|in)\b"
                r"(?![^.]{0,30}\b(?:unlock|phone|laptop|tablet|face id|touch id)\b)"
                r"|\b(?:got|has|have|verified|signed up for|created)\s+(?:an? |their )?(?:world id|worldcoin)\b"
                r"|\b(?:enrolled in|signed up for|uses?|has)\s+(?:clear|global entry|amazon one|palm pay\w*)\b"
                r"(?<!uses clear)(?<!use clear)(?<!has clear)"
                r"|\bstores? (?:an? )?(?:template|scan|copy|image) of (?:their|his|her|my) (?:fingerprints?|face"
                r"|iris|irises|palms?|voice|retinas?|veins?)\b"),
    # finances: court judgments, bailiffs, arrears, debt plans
    (FINANCES, r"\b(?:got|has|have|had|with|received)\s+(?:an? |two |three )?(?:ccj|county court judg(?:e)?ment"
               r"|debt relief order|dro|default notice|default on (?:their|his|her|my) credit file|iva"
               r"|debt management plan|dmp|payday loan)s?\b"
               r"|\bbailiffs?\b(?!['’]s|\s+(?:company|firm|work|assistant|officer|services?))"
               r"|\b(?:behind|in arrears) (?:on|with)\s+(?:\w+\s+){0,2}?(?:council tax|rent|mortgage|bills|car"
               r"|energy|gas|electric|water|loan|credit card|child support|student loan|payments?|utilities)\b"
               r"|\b(?:rent|council tax|mortgage) arrears\b|\bowes? (?:hmrc|the irs|the taxman|the bank|their"
               r" landlord|money to|thousands|a fortune)\b|\bwages? (?:garnish\w+|attached)\b|\bgarnished\b"
               r"|\bstepchange\b|\bloan shark\b|\b(?:remortgaged|sold (?:their|his|her|my) \w+) to pay (?:off )?"
               r"(?:debts?|the bills|creditors)\b|\bin (?:the )?red (?:every|each|by|most)\b"),
)
# What people say of these matters without the categories' own nouns: a call to one's sponsor, a count of days
# sober, a contraceptive in use, a petition signed, a fast kept from dawn, a prayer routine, a night in the cells, a
# transplant list moved up, a DNA kit's result, fingers printed at a border.
_PLAINLY_SAID: tuple[tuple[str, str], ...] = (
    (HEALTH, r"\b(?:my|their|his|her) (?:therapist|psychiatrist|psychologist|counsell?or)\b"
             r"(?!['’]?s? (?:friend|colleague|clients?|patients?|training|course|exams?|office)\b)"
             r"|\b(?:egg (?:retrieval|collection)|embryos?)\b[^.]{0,60}\b(?:transfer|implant\w*|frozen|day (?:five|5)"
             r"|blastocysts?)\b"
             r"|\b(?:surgery|vasectomy|hysterectomy|mastectomy|c-section|caesarean)\s+(?:\w+\s+){0,2}?"
             r"(?:booked|scheduled|planned)\b"),
    (SEX_LIFE, r"\b(?:on|uses?|using|takes?|taking|took|started|starting|switch\w* to|gets?|getting|had|has|have"
               r"|fitted with|thinking about)\s+(?:the |a |an |her |his |their |my )?(?:combined |progesterone-only "
               r"|copper |hormonal |contraceptive )?(?:contracepti(?:ve|on)(?: pill| implant| injection| patch)?"
               r"|depo(?:-provera)?(?: jab| shot| injection)?|iud|nexplanon|mini[- ]?pill|morning[- ]after pill"
               r"|nuvaring)\b|\bcontraceptive pill\b|\b(?:coil|implant) (?:fitted|put in|taken out|removed)\b"
               r"|\b(?:hooked|hooking|hooks) up with\b|\b(?:slept|sleeping|sleeps) with (?:a |an |this |some |my "
               r"|his |her |the )?(?:guy|girl|man|woman|stranger|someone|anyone|colleague|coworker|ex)\b"
               r"|\b(?:slept|sleeping|sleep) together\b|\bsexting\b|\bsex club\b|\bin the closet\b"
               r"|\bspent the night with (?:a|an|some|this|my|the) (?:coworker|colleague|guy|girl|man|woman"
               r"|stranger|ex)\b"
               r"|\b(?:i['’]m|is|am|are) (?:officially |finally |now )?out at (?:work|school|uni)\b"
               r"|\bbeing (?:ace|aro|pan|bi|gay|queer|lesbian)\b"
               r"|\b(?:being|as) an? (?:gay|lesbian|bi|bisexual|queer|pan|ace|asexual) (?:man|woman|person|guy|girl"
               r"|teacher|dad|mum|mom|parent|nurse|student|kid|teen)\b|\brapporti (?:\w+ )?senza protezione\b"
               r"|\b(?:had|have|having) (?:unprotected )?sex\b"
               r"|\b(?:i['’]m|i am|is|am|are|they['’]re|she['’]s|he['’]s)\s+(?:also\s+|only\s+|just\s+|mostly\s+)?"
               r"into\s+(?:girls|guys|boys|women|men|both|other (?:women|men|girls|guys))\b"
               r"|\b(?:i['’]m|i am|am|is)\s+pan\b(?![\w-]|\s+(?:fried|seared|roasted|frying|fry)\b)"),
    (RELIGION, r"\b(?:stopped|stop|stops) believing in god\b|\blost (?:my|their|his|her) faith\b"
               r"|\bfound (?:god|jesus|allah|faith|religion)\b"
               r"|\bleft the (?-i:(?:[A-Z][\w'-]+ ){1,3}(?:[Cc]hurch|[Ff]aith))\b"
               r"|\bleft the (?:jehovah'?s )?witnesses\b"
               r"|\b(?:back|home|returned) from (?:the |my |their |his |her )?(?:hajj|umrah)\b"
               r"|\b(?:five daily|daily|dawn|morning|evening) prayers?\b|\b(?:says?|saying|said|prays?|praying)"
               r" the rosary\b|\brosary (?:beads|every|each|before)\b"
               r"|\bshrine in (?:his|her|their|my) (?:kitchen|home|house|flat|bedroom|living room)\b"
               r"|\b(?:lights?|lit|lighting) (?:a |the )?diyas?\b"
               r"|\bfrom friday (?:sundown|sunset|evening) (?:until|till|to) saturday\b|\bfriday sundown\b"
               r"|\b(?:eat|eating|drink|drinking|fast|fasting|fasts)\b[^.]{0,40}\b(?:between dawn and|from dawn"
               r" (?:to|until|till)) (?:sunset|dusk|sundown)\b"),
    (POLITICS, r"\bmarch(?:ed|es|ing)? in (?:the|a) (?:[\w'’-]+ ){0,2}?(?:strike|march|protest|demo|rally)\b"
               r"|\bprotest camp\b|\bwith (?:his|her|their|my|a) placard\b"
               r"|\b(?:wrote|writes|written|writing) to (?:my|his|her|their|our) (?:mp|congressman|congresswoman"
               r"|senator|representative|councillor)\b"
               r"|\bcampaign(?:s|ed|ing)? (?:for|against) (?:[\w-]+ ){0,2}?(?:rights|reform|abolition)\b"
               r"|\bat (?:an?|the) (?:anti-[\w-]+|pro-[\w-]+|climate|peace|[\w-]+ solidarity) (?:march|rally"
               r"|protest|demo|demonstration|vigil)\b|\bspoil(?:ed|t|s)? (?:their|his|her|my) ballot\b"
               r"|\b(?:stood|standing|stands) as an? (?:[\w-]+ ){0,3}?candidate\b"
               r"|\b(?:volunteer\w*|campaign\w*|canvass\w*) for (?:the |a |our )?(?:[\w-]+ ){0,2}?candidate\b"
               r"|\b(?:die ?hard |proud )?maga (?:guy|girl|man|woman|dad|mom|mum|fan|voter|supporter)\b"
               r"|\b(?:signed|started|organi[sz]ed|circulated|launched|shared) (?:the |a |an |our )?(?:\w+ )?"
               r"petition (?:against|to (?:stop|ban|save|scrap|repeal|block|end|protect))\b|\bkettled\b"
               r"|\b(?:organi[sz](?:e|es|ed|ing)|led) (?:\w+ ){0,2}?(?:protests?|marches|march|rall(?:y|ies)|demos?"
               r"|demonstrations?|blockades?|sit-ins?|boycotts?|walkouts?)\b"
               r"|\b(?:leaflet\w*|handing out (?:leaflets|flyers)|canvass\w*|door-?knock\w*|phone-?bank\w*)\b[^.]{0,50}"
               r"\bfor (?:our|my|their|his|her|the) (?:candidate|party|campaign|mp|councillor)\b"),
    (FINANCES, rf"\b(?:lost|dropped|blew|blown)\b[^.;]{{0,20}}?{MONEY}[^.;]{{0,25}}?\b(?:bets?|betting|gambling"
               rf"|casino|slots|poker|roulette|the horses)\b"
               r"|\b(?:is|she['’]s|he['’]s|i['’]m|they['’]re|am|are|was)\s+on\s+(?:about |around |only |just )?"
               r"[£$€]\s?\d[\d,.]*\s?k?\b(?!\s+(?:a|per) (?:day|hour)\b)"
               r"|\b(?:insufficient funds|account (?:was|is) empty)\b"
               r"|\b(?:applied|qualif\w+|eligible|asked (?:\w+ ){0,3}?about) (?:for )?free (?:school )?meals\b"
               r"|\bskipp\w+ (?:meals|lunch|dinner|breakfast) so (?:her|his|their|my|the) (?:kids|children) can eat\b"
               r"|\b(?:borrow\w*|selling|sold|sells|pawn\w*|dipping into)\b[^.]{0,40}\b(?:to (?:make|cover|pay)"
               r" (?:the |my |their |his |her )?(?:rent|bills|groceries)|until payday)\b"
               r"|\b(?:salary|pay|wages?|income|hours) (?:was |were |got |has been |have been )?"
               r"(?:cut|halved|slashed)\b"
               r"|\b(?:0|zero|no) savings\b|\bmake the money last\b|\bon an? (?:[\w-]+ )?payment plan\b"
               r"|\bcards? maxed\b|\boverdraft\b[^.]{0,30}\b(?:its |the )?limit\b"
               r"|\b(?:putting|put|puts|paying for) (?:the |her |his |my |their )?(?:weekly |food |grocery )?(?:shop"
               r"|shopping|groceries|food) on (?:klarna|clearpay|afterpay|credit|a credit card|the credit card)\b"
               r"|\b(?:receives?|receiving|claims?|claiming|gets?|getting) (?:housing benefit|universal credit"
               r"|child benefit|pip|jobseeker'?s allowance|pension credit|food stamps|snap|medicaid"
               r"|disability benefits?|unemployment benefits?)\b"),
    (RECOVERY, r"\b(?:calls?|called|calling|rang|rings?|texted|texts?|meets?|met) (?:my|his|her|their) sponsor\b"
               r"|\b(?:my|his|her|their) detox\b|\b(?:been to|went to|in|out of|finished) detox\b"
               r"|\b(?:been|started|i['’]m|am|is) using again\b(?=\s*(?:$|[.,!;]))"
               r"|\bday \d+ (?:sober|clean|dry)\b"),
    (TRADE_UNION, r"\b(?:our|my) (?:trade |labou?r )?union(?:['’]s)?\s+(?:local|branch|chapter|reps?|representative"
                  r"|steward|meeting|ballot|president|secretary|health and safety rep)\b"
                  r"|\b(?:secretary|chair|president|treasurer|rep|representative|steward|delegate|convenor) (?:of|for"
                  r"|in|at) (?:our|my|their|his|her) (?:\w+ )?union\b"
                  r"|\bwalked out\b[^.]{0,60}\bover (?:the |a |our )?(?:pay|wages?|pensions?|conditions|cuts"
                  r"|staffing)\b"),
    (CRIMINAL_RECORD, r"\bfail(?:s|ed|ing)? (?:\w+ ){0,2}?(?:dbs|background|criminal (?:record|background)) checks?\b"
                      r"|\b(?:finish\w*|serv\w*|complet\w*|after)\s+(?:an? |the |his |her |their )?(?:[\w-]+ )?"
                      r"(?:prison |jail )?sentence for\b"
                      r"|\b(?:my|his|her|their) (?:criminal )?record (?:for|came up|got expunged|was expunged|expunged"
                      r"|sealed|was sealed|is spent)\b|\bexpunged\b"
                      r"|\b(?:night|nights|weekend|hours|day) in (?:a |the )?(?:police )?cells?\b|\bin the cells\b"
                      r"|\b(?:magistrates?|judge|court|sheriff) (?:gave|sentenced|fined|ordered|banned|handed)"
                      r" (?:me|him|her|them)\b|\b\d+ hours (?:of )?(?:unpaid work|community service)\b"),
    (GENDER_IDENTITY, r"\b(?:living|lives|lived|live) (?:full[- ]time )?as an? (?:woman|man|girl|boy)\b"
                      r"|\b(?:going|goes|go) by (?-i:[A-Za-z][a-z]+) now\b|\b(?:now )?using (?:she/her|he/him)\b"
                      r"|\bpresenting as (?:myself|herself|himself|themselves|a (?:woman|man|girl|boy))\b"),
    (ORGAN_DONATION, r"\b(?:pledged|registered|signed up|decided|agreed|chose|opted in) to donate (?:my|his|her"
                     r"|their) organs\b|\b(?:up|on|moving up|top of|near the top of) (?:the )?(?:waiting )?list for"
                     r" (?:a )?(?:new |donor )?(?:lungs?|heart|kidney|liver|pancreas|cornea)\b"
                     r"|\b(?:a|the) (?:new |donor )?(?:heart|lungs?|kidney|liver|pancreas) (?:has |had )?"
                     r"(?:become|became|is) available\b|\btransplant assessment\b"),
    (GENETIC, r"\b(?:heterozygous|homozygous)\b|\bpaternity test\b|\bpharmacogenomic\b|\bfamilial hypercholesterol\w*"
              r"|\bcarriers? of (?:the same |a |an )?(?:recessive|genetic|inherited)\b|\ban inherited form of\b"
              r"|\b(?:has|have|had|with|confirmed) (?:an? |the )?(?:confirmed )?(?-i:[A-Z][A-Z0-9]{2,6}) (?:mutation"
              r"|variant|deletion)\b"
              r"|\bpathogenic (?:change|variant|mutation)\b|\bchromosom\w* (?:translocation|abnormality|deletion"
              r"|disorder)\b|\b(?:carr\w+|positive for|variant in|mutation in|change in|cop(?:y|ies) of)"
              r" (?:the |a |an )?(?-i:[A-Z][A-Z0-9]{2,6}) gene\b"
              r"|\b(?:[\w-]+osis|[\w-]+a?emia|cystic fibrosis|sickle[- ]cell|tay-sachs|brca\d?|gene|genetic) carrier\b"
              r"|\b(?:23andme|ancestry(?:dna)?(?: dna)? (?:kit|test)|dna (?:kit|test)|spit kit|cheek swab|myheritage)"
              r"\b[^.]{0,80}\b(?:revealed|turns out|apparently|half-(?:sister|brother|sibling))"
              r"|\bresults? (?:from|of) (?:the|my|his|her|their) (?:ancestry|dna|23andme|spit|genetic) (?:kit|test)\b"),
    (BIOMETRIC, r"\b(?:recorded|scanned|stored|registered|enrolled|captured|took|taken|kept) (?:my|his|her|their)"
                r" (?:face|iris|irises|fingerprints?|palms?|retinas?|typing pattern)\b"
                r"(?![^.]{0,30}\b(?:unlock|phone|laptop|tablet|face id|touch id)\b)"
                r"|\b(?:all )?(?:ten|10|both) (?:fingers|thumbs)\b[^.]{0,60}\b(?:scanned|scanner|glass plate|reader"
                r"|file|record|consulate|embassy|border|police)\b"
                r"|\bfingerprint\b[^.]{0,40}\b(?:has stored|stored|on file|kept on|holds)\b"
                r"|\b(?:signed up|enrolled|registered|logs? in|clocks? in|pays?|gets? in)\b[^.]{0,40}\b(?:fingerprint"
                r"|finger-?vein|palm|iris|voice|face) (?:entry|scanner|reader|system|recognition|verification)\b"
                r"(?![^.]{0,30}(?:phone|laptop|tablet|ipad|android|pixel|galaxy|watch)\b)"
                r"|\b(?:stores?|stored|keeps?|kept|holds?) (?:his|her|their|my) (?:vein|palm|iris|fingerprint|voice"
                r"|face) (?:pattern|print|template|data|scan)\b|\bidentif\w+ (?:them|him|her|me) by (?:the sound of )?"
                r"(?:their|his|her|my) voice\b|\beveryone['’]s fingerprints\b|\bprints (?:they|he|she|i) registered\b"
                r"|\b(?:thumb|finger|palm) on (?:a|the) (?:reader|scanner)\b"),
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
    (category, re.compile(pattern, re.IGNORECASE))
    for category, pattern in (*_PATTERNS, *_INDIRECT, *_FAMILIES, *_PLAINLY_SAID)
)
