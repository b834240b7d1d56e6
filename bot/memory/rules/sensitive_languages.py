"""What the sensitive backstop reads in other languages (Spanish, French, German, Italian, Portuguese, Dutch, Polish,
Russian, Turkish, Chinese, Japanese, Korean): the same statements as in English, built from a compact vocabulary
rather than one sentence at a time.

A statement is a frame and a term: "has / suffers from / was diagnosed with / takes" before a condition or a
medicine ("Tiene ansiedad", "Souffre d'un asthme sévère", "Hat Multiple Sklerose", "Bierze insulinę"), "is" before an
orientation, faith or leaning ("Ist asexuell", "Es militante de Podemos", "È credente"), and a few terms that say
enough alone ("Bürgergeld", "testimone di Geova", "sin papeles"). The frames of every language share one alternation
and the terms are word stems (inflection rides on `\\w*`), so a frame of one language with a term of another still
reads as a statement: cheap, and never a look-alike ("Trabaja como enfermera", "Étudie l'histoire des religions"
carry no frame). Chinese, Japanese and Korean run words together, so there a condition's name is the statement,
unless the text is about work or study (`CJK_NOT_ABOUT_THEM`).

Each entry is (category, pattern, vocabulary): the vocabulary is the part of the pattern every match contains, from
which the caller derives the word prefixes of its trigger gate. Whether a match is about someone else is decided by
the caller, with `OTHER_PEOPLE` for these languages.
"""

from __future__ import annotations

import re

from bot.memory.rules.sensitive_special import (
    BIOMETRIC,
    CRIMINAL_RECORD,
    FINANCES,
    GENDER_IDENTITY,
    GENETIC,
    HEALTH,
    IMMIGRATION,
    ORGAN_DONATION,
    POLITICS,
    RECOVERY,
    RELIGION,
    SEX_LIFE,
    TRADE_UNION,
)


def _any(*words: str) -> str:
    return "(?:" + "|".join(words) + ")"


# --- vocabularies (word stems; each starts a word, so its literal head is a prefix the trigger gate can see) ---

_CONDITIONS = _any(
    # diabetes, asthma, epilepsy, sclerosis, fibromyalgia
    r"diabet\w*", r"diabète\w*", r"diab[eé]tic\w*", r"cukrzyc\w*", r"diyabet\w*", r"диабет\w*", r"suikerziekte",
    r"zuckerkrank\w*", r"asthm\w*", r"asma\w*", r"astm\w*", r"astım\w*", r"астм\w*", r"epilep\w*", r"épilep\w*",
    r"padaczk\w*", r"эпилепс\w*", r"multiple sklerose", r"multiple sclerose", r"sclérose en plaques",
    r"sclerosi multipla", r"esclerosis múltiple", r"esclerose múltipla", r"stwardnieni\w* rozsian\w*",
    r"рассеянн\w* склероз\w*", r"multipl skleroz", r"fibromialg\w*", r"fibromyalg\w*", r"fibromiyalji\w*",
    # cancers and tumours
    r"cancer\w*", r"cáncer\w*", r"cancro", r"krebs\w*", r"kanker\w*", r"kanser\w*", r"nowotw\w*", r"рак\w*",
    r"(?:brust|lungen|darm|prostata|haut|blut|magen|hoden|bauchspeicheldrüsen)krebs", r"tumor\w*", r"tumeur\w*",
    r"tumore\w*", r"leucemi\w*", r"leucémi\w*", r"leukämi\w*", r"leukemi\w*", r"białaczk\w*", r"lymphom\w*",
    r"linfoma\w*", r"chłoniak\w*", r"melanom\w*", r"carcinom\w*", r"sarcom\w*", r"mieloma\w*", r"myelom\w*",
    # mental health and neurodevelopment
    r"depres\w*", r"dépres\w*", r"депресс\w*", r"ansiedad", r"ansiedade", r"anxiété", r"angststörung\w*",
    r"angsterkrankung\w*", r"panikattack\w*", r"crisis de ansiedad", r"attaques? de panique", r"disturbo d['’]ansia",
    r"attacchi di panico", r"ataques? de pánico", r"zaburzeni\w* lękow\w*", r"anksiyete\w*", r"тревожн\w*",
    r"bipolar\w*", r"dwubiegunow\w*", r"биполярн\w*", r"schizophr\w*", r"schizofren\w*", r"esquizofren\w*",
    r"шизофрен\w*", r"şizofren\w*", r"autis\w*", r"autyzm\w*", r"autyst\w*", r"аутизм\w*", r"otizm\w*", r"tdah",
    r"adhs", r"adhd", r"tdai", r"dehb", r"ptbs", r"tept", r"zwangsstörung\w*", r"trastorno\w*", r"troubles? (?:du|de"
    r" la|bipolaire|anxieu\w*|obsessionnel\w*|alimentaire\w*)", r"disturb\w* (?:bipolare|ossessiv\w*|alimentar\w*)",
    r"transtorno\w*", r"essstörung\w*", r"magersucht", r"anorexi\w*", r"anoressi\w*", r"bulimi\w*", r"boulimi\w*",
    r"burn-?out", r"insomni\w*", r"schlafstörung\w*", r"dyslexi\w*", r"dislexi\w*", r"legasthen\w*", r"dysleksj\w*",
    # chronic and other conditions
    r"hipertens\w*", r"hypertens\w*", r"ipertension\w*", r"bluthochdruck", r"nadciśnieni\w*", r"гипертони\w*",
    r"hipertansiyon\w*", r"tensión alta", r"presión alta", r"pressão alta", r"arthrit\w*", r"artrit\w*",
    r"arthrose", r"artrosi\w*", r"rheuma\w*", r"reuma\w*", r"артрит\w*", r"lupus", r"crohn\w*", r"colite\w*",
    r"colitis", r"zöliakie", r"celiac\w*", r"celíac\w*", r"céliaqu\w*", r"celiachi\w*", r"parkinson\w*",
    r"alzheimer\w*", r"demenz\w*", r"demencia", r"démence", r"demenza", r"demência", r"hiv", r"vih", r"sida", r"aids",
    r"вич", r"спид", r"hepatit\w*", r"hépatite\w*", r"epatite\w*", r"гепатит\w*", r"endometrio\w*", r"endométrio\w*",
    r"migräne\w*", r"migraine\w*", r"migrañas?", r"migren\w*", r"emicrani\w*", r"enxaquec\w*", r"jaquecas?",
    r"мигрен\w*", r"insuffisance (?:cardiaque|rénale)", r"insuficiencia (?:cardíaca|renal)", r"herzinsuffizienz",
    r"herzkrank\w*", r"herzerkrank\w*", r"niereninsuffizienz", r"psoria\w*", r"neurodermitis", r"ekzem\w*",
    r"eczema\w*", r"eczéma\w*", r"cirrosi\w*", r"cirrhose", r"zirrhose", r"mucoviscidose", r"mukoviszidose",
    r"fibrosis quística", r"fibrosi cistica", r"fibrose cística", r"mukowiscydoz\w*", r"drépanocytose",
    r"drepanocitosi", r"thalass\w*", r"talasemi\w*", r"hipotiroid\w*", r"hypothyr\w*", r"hashimoto\w*",
    r"endometriose", r"long covid", r"covid long", r"tinnitus", r"acúfenos", r"acouphènes?",
    r"acufeni", r"ictus", r"schlaganfall", r"infarto", r"infarctus", r"herzinfarkt", r"zawał\w*", r"инфаркт\w*",
    r"инсульт\w*", r"udar\w*", r"enfermedad\w*", r"maladie\w*", r"krankheit\w*", r"erkrankung\w*", r"malattia\w*",
    r"doença\w*", r"ziekte\w*", r"choroba\w*", r"chorob\w*", r"заболевани\w*", r"hastalığ\w*", r"discapacidad",
    r"behinderung", r"disabilità", r"deficiência", r"niepełnosprawn\w*", r"инвалидност\w*",
)
_MEDICINES = _any(
    r"insulin\w*", r"insuline", r"insulina\w*", r"insulinę", r"инсулин\w*", r"metformin\w*", r"sertralin\w*",
    r"fluoxetin\w*", r"escitalopram\w*", r"citalopram\w*", r"paroxetin\w*", r"venlafaxin\w*", r"duloxetin\w*",
    r"mirtazapin\w*", r"bupropion\w*", r"quetiapin\w*", r"olanzapin\w*", r"risperidon\w*", r"aripiprazol\w*",
    r"lamotrigin\w*", r"levetiracetam", r"valpro\w*", r"carbamazepin\w*", r"lithium", r"litio", r"lítio",
    r"methylphenidat\w*", r"metilfenidat\w*", r"ritalin\w*", r"elvanse", r"concerta", r"lorazepam", r"diazepam",
    r"alprazolam", r"clonazepam", r"tavor", r"valium", r"xanax", r"lexapro", r"prozac", r"zoloft", r"levothyrox\w*",
    r"l-thyroxin", r"euthyrox", r"methotrexat\w*", r"metotrexat\w*", r"ozempic", r"wegovy", r"mounjaro",
    r"semaglutid\w*", r"truvada", r"antidepresiv\w*", r"antidepress\w*", r"antidépresseur\w*",
    r"antidepresant\w*", r"антидепрессант\w*", r"ansiolític\w*", r"anxiolytique\w*", r"ansiolitic\w*",
    r"antipsicótic\w*", r"neurolepti\w*", r"antirretroviral\w*", r"antirétrovir\w*", r"antiretrovir\w*",
    r"quimio\w*", r"chimio\w*", r"chemio\w*", r"chemotherapie", r"chemioterapi\w*", r"radioterapi\w*",
    r"radiothérapie", r"strahlentherapie", r"diálisis", r"dialyse", r"dialisi", r"diálise", r"dializ\w*",
    r"hemodiálisis", r"metadon\w*", r"méthadone", r"methadon", r"buprenorfin\w*", r"subutex", r"naltrexon\w*",
    r"medicamentos? (?:para|contra) (?:la|el) \w+", r"médicaments? (?:pour|contre) (?:la|le|l['’])\s*\w+",
    r"medikamente gegen \w+", r"farmaci per \w+", r"remédios? para \w+", r"leki na \w+", r"antidepressiva",
    # devices and aids
    r"marcapasos", r"herzschrittmacher\w*", r"stimulateur cardiaque", r"pacemaker", r"ostom\w+", r"estom\w+",
    r"stoma\w*", r"colostom\w+", r"kolostom\w+", r"insulinpumpe", r"bomba de insulina", r"pompe à insuline",
    r"microinfusore", r"hörgerät\w*", r"implante coclear", r"implant cochléaire", r"cochlea-?implantat\w*",
    r"impianto cocleare", r"epipen\w*", r"adrenalin-?pen\w*", r"rollstuhl", r"silla de ruedas", r"fauteuil roulant",
    r"cadeira de rodas", r"sedia a rotelle", r"glukosesensor", r"sensor de glucosa", r"capteur de glycémie",
    # contraception
    r"la pilule", r"la pillola", r"la píldora", r"a pílula", r"die pille", r"anticoncepcional\w*",
    r"anticonceptiv\w*", r"contraccettiv\w*", r"contraceptif\w*", r"antibabypille", r"pigułk\w* antykoncepcyjn\w*",
)
_ORIENTATIONS = _any(
    r"gay", r"lesbian\w*", r"lesbisch\w*", r"lesbienne\w*", r"lésbica\w*", r"lesbica\w*", r"lesbijk\w*",
    r"bisexu\w*", r"bissexua\w*", r"bisessual\w*", r"biseksual\w*", r"pansexu\w*", r"panseksual\w*", r"asexu\w*",
    r"assexua\w*", r"asessual\w*", r"aseksual\w*", r"homosexu\w*", r"homossexua\w*", r"omosessual\w*",
    r"homoseksual\w*", r"homoseksue\w*", r"biseksue\w*", r"gej\w*",
    r"schwul\w*", r"queer", r"гей", r"лесбиянк\w*", r"бисексуал\w*", r"асексуал\w*", r"homo(?!\s+sapiens)",
)
_GENDER_TERMS = _any(
    r"transgender\w*", r"transgénero", r"transgênero", r"transgenre", r"transexual\w*", r"transsexu\w*",
    r"transessual\w*", r"transpersoon", r"трансгендер\w*", r"non[- ]?binair\w*", r"non[- ]?binari\w*",
    r"no binari\w*", r"não[- ]binári\w*", r"nicht[- ]?binär\w*", r"nichtbinär\w*", r"niebinarn\w*",
    r"trans(?:-|\s+)(?:mann|frau|man|vrouw|kobiet\w*|mężczyzn\w*|person\w*)",
    r"(?:mulher|mujer|femme|frau|donna|homem|hombre|homme|uomo|chica|chico|fille|garçon) trans",
)
_FAITHS = _any(
    r"musulm\w*", r"muslim\w*", r"moslim\w*", r"muzułman\w*", r"cristian\w*",
    r"christ(?:lich\w*|in|en|ian\w*)", r"chrześcijan\w*",
    r"chretien\w*", r"chrétien\w*", r"katholi\w*", r"catholique\w*", r"católic\w*", r"catolic\w*", r"cattolic\w*",
    r"katolik\w*", r"katoliczk\w*", r"evangélic\w*", r"evangelic\w*", r"evangelisch\w*", r"évangélique\w*",
    r"protestant\w*", r"ortodox\w*", r"orthodox\w*", r"prawosławn\w*", r"judí[oa]", r"judeu", r"judia", r"jüdisch\w*",
    r"juif", r"juive", r"ebre[oa]", r"żyd\w*", r"joods", r"buddhist\w*", r"budist\w*", r"bouddhiste\w*",
    r"buddista", r"buddyst\w*", r"hindu\w*", r"hindou\w*", r"sikh\w*", r"ateo", r"atea", r"ateu", r"ateia",
    r"athée\w*", r"atheist\w*", r"ateist\w*", r"agnóstic\w*", r"agnostic\w*", r"agnostique\w*", r"agnostik\w*",
    r"mormon\w*", r"creyente", r"crente", r"credente", r"croyante?", r"gläubig\w*", r"wierząc\w*", r"gelovig\w*",
    r"practicante", r"praticante", r"pratiquante?", r"praktizierend\w*", r"praktykując\w*", r"religios[oa]",
    r"religieu\w*", r"religiös\w*", r"religijn\w*", r"верующ\w*", r"мусульман\w*", r"православн\w*",
)
_LEANINGS = _any(
    r"socialist\w*", r"sozialist\w*", r"socjalist\w*", r"comunist\w*", r"communist\w*", r"kommunist\w*",
    r"komunist\w*", r"anarquist\w*", r"anarchist\w*", r"libertari\w*", r"conservad[oa]r[ae]?s?", r"konservativ\w*",
    r"conservat(?:ore|rice|eur|rice)", r"liberale?s?", r"libérale?", r"progresist\w*",
    r"progressist\w*", r"nacionalist\w*", r"nationalist\w*", r"nazionalist\w*", r"ecologist\w*", r"écologiste\w*",
    r"peronist\w*", r"chavist\w*",
    r"kirchnerist\w*", r"bolsonarist\w*", r"petista", r"lulista", r"gaullist\w*", r"sozialdemokrat\w*",
    r"socialdemócrata", r"social-démocrate", r"socialdemocrat\w*", r"franquista", r"fascist\w*", r"faschist\w*",
    r"de (?:izquierdas?|derechas?|gauche|droite|esquerda|direita)", r"di (?:sinistra|destra)", r"links",
    r"rechts", r"(?:links|rechts)(?:radikal|extrem|liberal|konservativ)\w*", r"lewicow\w*", r"prawicow\w*",
    r"linkse?", r"rechtse?",
)
_PARTY_WORDS = _any(
    # the word "party" and the parties of many countries (only read after a frame of voting or membership)
    r"partido\w*", r"parti", r"partei\w*", r"partito", r"partij\w*", r"partii", r"partia", r"партии", r"partisi",
    r"spd", r"cdu", r"csu", r"fdp", r"afd", r"grüne\w*", r"linke\w*", r"bsw", r"övp", r"spö", r"fpö", r"neos", r"svp",
    r"lfi", r"insoumis\w*", r"rn", r"rassemblement national", r"front national", r"ps", r"lr", r"les républicains",
    r"renaissance", r"eelv", r"les verts", r"pcf", r"reconquête", r"modem", r"npa", r"psoe", r"pp", r"vox",
    r"podemos", r"sumar", r"izquierda unida", r"ciudadanos", r"erc", r"junts", r"pnv", r"bildu", r"bng",
    r"compromís", r"más madrid", r"pd", r"lega", r"fratelli d['’]italia", r"forza italia", r"movimento 5 stelle",
    r"m5s", r"cinque stelle", r"psd", r"chega", r"bloco de esquerda", r"pcp", r"iniciativa liberal", r"pvv",
    r"vvd", r"d66", r"cda", r"pvda", r"groenlinks", r"bbb", r"volt", r"fvd", r"ja21", r"christenunie", r"ptb",
    r"n-va", r"vlaams belang", r"vooruit", r"ecolo", r"pis", r"platform\w* obywatelsk\w*", r"koalicj\w* obywatelsk\w*",
    r"konfederacj\w*", r"lewic\w*", r"razem", r"psol", r"pt", r"pl", r"mdb", r"psdb", r"morena", r"pri", r"pan",
    r"peronismo", r"la libertad avanza",
    r"akp", r"ak parti", r"chp", r"mhp", r"hdp", r"dem parti", r"fidesz", r"единая россия", r"кпрф", r"sinn féin",
    r"fianna fáil", r"fine gael",
)
_DEBT = _any(
    r"endeudad\w*", r"sobreendeudad\w*", r"surendetté\w*", r"endetté\w*", r"verschuldet\w*", r"überschuldet\w*",
    r"indebitat\w*", r"endividad\w*", r"superendividad\w*", r"zadłużon\w*", r"в долгах", r"borç\w*", r"schulden",
    r"deudas?", r"dettes?", r"debiti", r"dívidas?", r"privatinsolvenz", r"insolvenz", r"quiebra",
    r"bancarrota", r"faillite", r"falência", r"bankructw\w*", r"upadłość", r"faillissement",
)
_BENEFITS = _any(
    r"bürgergeld", r"hartz", r"hartz-iv", r"arbeitslosengeld", r"sozialhilfe", r"grundsicherung", r"wohngeld",
    r"rsa", r"revenu de solidarité", r"allocations? (?:chômage|logement|familiales|adulte handicapé)", r"aah",
    r"minimos? sociaux", r"minima sociaux", r"ingreso mínimo vital", r"renta mínima", r"subsidio\w*",
    r"prestación por desempleo", r"bolsa família", r"auxílio\w*", r"reddito di cittadinanza", r"assegno di inclusione",
    r"bijstand", r"uitkering", r"zasił\w*", r"пособи\w*", r"kela", r"banco de alimentos", r"banque alimentaire",
    r"restos du cœur", r"voedselbank", r"banco alimentare", r"tafel",
)
_OFFENCE_WORDS = _any(
    r"antecedentes penales", r"casier judiciaire", r"vorstrafe\w*", r"vorbestraft", r"precedenti penali",
    r"fedina penale", r"antecedentes criminais", r"ficha criminal", r"strafblad", r"karaln\w*", r"судимост\w*",
    r"condenad[oa] (?:a|por)", r"condamnée? (?:à|pour)", r"verurteilt (?:wegen|zu)", r"condannat[oa] (?:a|per)",
    r"veroordeeld (?:tot|voor|wegens)", r"skazan\w* (?:na|za)", r"осужд\w*", r"auf bewährung", r"sursis",
    r"liberdade condicional", r"libertà vigilata", r"arresti domiciliari", r"bracelet électronique", r"fußfessel",
    r"pulsera telemática", r"haftstrafe", r"detenid[oa] por", r"arrêtée? pour", r"festgenommen",
    r"arrestat[oa] per", r"preso por", r"(?:saß|sass|war|estuvo|estava|esteve|fue|stato|stata|zat|siedział\w*"
    r"|сидел\w*|a fait|a été|était) (?:\w+ ){0,3}?(?:im|en (?:la )?|in|na|w|в|de la|em) ?(?:knast|gefängnis|cárcel"
    r"|prisión|prison|prigione|carcere|gevangenis|więzieniu|тюрьме|prisão|cadeia)",
)
_MIGRATION = _any(  # papers and statuses: said of oneself wherever they stand
    r"(?:demande|demandé|obtenu|solicit\w+|pidió|obtuvo|pediu|obteve|chiesto|ottenuto|richiesta|domanda)"
    r" (?:d[e'’] ?|l['’]|el |o |di )?(?:asile|asilo)", r"asylantrag", r"asylverfahren", r"asylstatus", r"sin papeles",
    r"sem papéis", r"sem documentos",
    r"ohne papiere", r"papierloos", r"ongedocumenteerd\w*", r"sans titre de séjour", r"permiso de trabajo",
    r"permis de travail", r"arbeitserlaubnis", r"permesso di lavoro", r"verblijfsvergunning", r"karta pobytu",
    r"karty pobytu", r"situation irrégulière", r"situación irregular", r"situação irregular",
    r"situazione irregolare", r"вид на жительство", r"visado de (?:estudiante|trabajo|residencia)",
    r"visa (?:de|d['’]) (?:étudiant|travail)", r"studentenvisum", r"arbeitsvisum",
    r"visto (?:di|de) (?:studio|lavoro|estudante|trabalho)", r"niebieska karta", r"blaue karte", r"tarjeta azul",
)
_MIGRANTS = _any(  # people: only after "is" or "came as" ("teaches Spanish to refugees" names others)
    r"refugiad[oa]", r"réfugiée?", r"flüchtling", r"geflüchtete\w*", r"rifugiat[oa]", r"vluchteling",
    r"uchodźc\w*", r"беженец", r"беженк\w*", r"demandeu\w* d['’]asile", r"solicitante de asilo",
    r"richiedente asilo", r"asielzoeker", r"asylbewerber\w*", r"indocumentad[oa]", r"clandestin[oae]?",
    r"sin papeles", r"sans[- ]papiers", r"irregular", r"irrégulière?",
)
_ADDICTS = _any(  # people: only after "is" ("works with addicts" names others)
    r"(?:ex-?)?adict[oa]", r"(?:ex-?)?toxicómano", r"(?:ancien\w* )?toxicomane", r"drogadict[oa]",
    r"drogensüchtig\w*", r"drogenabhängig\w*", r"alkoholabhängig\w*", r"spielsüchtig\w*", r"süchtig",
    r"tossicodipendent\w*", r"toxicodependente", r"dependente químic[oa]", r"verslaafd\w*", r"uzależnion\w*",
    r"narkoman\w*", r"наркоман\w*", r"алкоголик\w*", r"ludópata", r"accro",
)
_RECOVERY_WORDS = _any(
    r"narcóticos anónimos", r"narcotiques anonymes", r"narcotici anonimi", r"narcóticos anônimos",
    r"alcolisti anonimi", r"alcoólicos an[oô]nimos", r"anonimowi alkoholicy", r"анонимн\w* алкоголик\w*",
    r"ludopatía", r"dejó de beber", r"dejó (?:la|las|el) (?:cocaína|heroína|drogas|alcohol|bebida)",
    r"a arrêté de boire", r"a arrêté (?:l['’]alcool|la drogue|la cocaïne|l['’]héroïne)", r"aufgehört zu trinken",
    r"ha smesso di bere", r"parou de beber", r"przestał\w* pić", r"sobria desde", r"sobrio desde", r"nüchtern seit",
    r"clean seit", r"desintoxicación(?! digital)", r"cure de désintox\w*", r"entzug\w*", r"disintossicazione",
    r"afkickkliniek", r"odwyk\w*",
)
_ORGAN_WORDS = _any(
    r"donatore di organi", r"donatrice di organi", r"orgaandonor", r"dawc\w* (?:narządów|szpiku)",
    r"donante de (?:médula|riñón|hígado)", r"donneu\w* de moelle", r"stammzellspender\w*", r"knochenmarkspender\w*",
    r"dkms", r"lista de espera (?:de|para) (?:un )?(?:trasplante|transplante|riñón|hígado|corazón|pulmón)",
    r"(?:donó|doné|a donné|ha donato|doou|doei) (?:\w+ ){0,3}?"
    r"(?:riñón|hígado|rein|foie|niere|leber|rene|fegato|rim|fígado|nier|lever|médula|moelle|midollo)",
    r"(?:riñón|hígado|rein|foie|niere|leber|rene|fegato|rim|fígado|nier) (?:\w+ ){0,2}?(?:donad[oa]|trasplantad[oa]"
    r"|transplanté|transplantiert|trapiantat[oa]|transplantad[oa]|gespendet)",
)

# --- frames -------------------------------------------------------------------------------------------------

_HAS = _any(  # "has, suffers from, was diagnosed with, lives with, is treated for, takes"
    r"tiene", r"tengo", r"tenía", r"padece", r"padezco", r"sufre(?: de)?", r"sufro(?: de)?", r"diagnosticad[oa]s?",
    r"le diagnosticaron", r"me diagnosticaron", r"vive con", r"convive con", r"lucha contra", r"en tratamiento",
    r"tratamiento (?:para|contra|de)", r"toma", r"tomo", r"tem", r"tenho", r"tinha", r"sofre(?: de| com)?",
    r"sofro(?: de| com)?", r"vive com", r"convive com", r"luta contra", r"em tratamento", r"faz tratamento",
    r"a (?:une?|de l['’]|du|des|le)", r"(?:(?<=^)|(?<=\bet )|(?<=\bqui )|(?<=\belle )|(?<=\bil ))a (?:la|l['’])",
    r"ai (?:une?|de l['’]|de la|du|des|le|la|l['’])",
    r"souffre", r"souffrant", r"atteinte?", r"diagnostiquée?", r"vit avec", r"lutte contre", r"sous", r"prend",
    r"traitée? pour", r"en traitement", r"soignée? pour", r"hat", r"habe", r"hatte", r"leidet(?: an| unter)?",
    r"litt(?: an| unter)?", r"diagnostiziert", r"lebt mit", r"kämpft gegen", r"erkrankt(?: an)?", r"nimmt",
    r"in behandlung", r"bekommt", r"macht eine", r"ha", r"ho", r"aveva", r"soffre(?: di)?", r"affett[oa] da",
    r"diagnosticat[oa]", r"diagnosi di", r"convive con", r"combatte", r"in cura", r"malat[oa] di", r"prende",
    r"assume", r"heeft", r"lijdt(?: aan)?", r"gediagnosticeerd", r"leeft met", r"neemt", r"slikt",
    r"behandeld voor", r"ma", r"mam", r"miał\w*", r"choruje(?: na)?", r"cierpi(?: na)?", r"zdiagnozowano",
    r"leczy się(?: na)?", r"bierze", r"przyjmuje", r"żyje z", r"болеет", r"болен", r"больна", r"страдает",
    r"диагноз\w*", r"диагностировали", r"у (?:него|неё|нее|меня)", r"принимает", r"лечится(?: от)?",
    r"живёт с", r"живет с", r"перенес\w*", r"lleva", r"llevo", r"usa", r"utiliza", r"trägt", r"porte",
    r"utilise", r"utilizza", r"sitzt im", r"en tratamiento (?:por|de|para)", r"em tratamento (?:para|de|contra)",
    r"en traitement (?:pour|contre)", r"in behandlung wegen", r"in cura per", r"in trattamento per",
)
_IS = _any(  # "is, identifies as, came out as, became, converted to"
    r"es", r"soy", r"era", r"se identifica como", r"se considera", r"salió del armario como", r"é", r"sou",
    r"se assumiu", r"se declara", r"est", r"suis", r"s['’]identifie comme", r"se considère", r"se dit",
    r"ist", r"bin", r"war", r"identifiziert sich als", r"hat sich als", r"outete sich als", r"è", r"sono",
    r"si identifica come", r"si considera", r"si dichiara", r"is", r"ben", r"jest", r"jestem", r"był\w*",
    r"identyfikuje się jako", r"(?:fatto|fait|hecho|feito|hizo|fez) (?:(?:il|son|su|o|el) )?coming out"
    r" (?:come|comme|como)", r"он", r"она", r"converti\w*(?: al| à la| à l['’]| ao| zum| zur| in)?",
    r"konvertiert(?: zum| zur)?", r"se convirtió al", r"s['’]est converti\w* à l['’]", r"cresciut[oa]",
    r"criad[oa]", r"élevée?", r"erzogen",
)
_ARTICLE = (
    r"(?:(?:un|une|una|uno|um|uma|ein|eine|einer|een|un['’]|muy|très|sehr|molto|muito|bardzo|zeer|überzeugte?r?"
    r"|practicante|pratiquant\w*|praticante|fervente|convencid[oa]|convaincue?|ex-?)\s+){0,2}"
)
_FILLER = r"(?:[\w'’-]+\s+){0,4}?(?:\w['’])?"  # "d'un", "una forma de", "leichte": a few words between

_MEMBER = _any(  # of a party or a union
    r"milita(?: en)?", r"militante (?:de|del)", r"militant\w* (?:du|de|à|au|chez|d['’])", r"militanza",
    r"afiliad[oa] (?:a|al)", r"filiad[oa] (?:ao|à|a|no)", r"miembro (?:de|del)", r"membre (?:du|de|d['’]|des)",
    r"adhérent\w* (?:du|de|au|à|d['’])", r"mitglied (?:der|bei|in der|im|des)", r"parteimitglied",
    r"iscritt[oa] (?:al|a|alla)", r"tesserat[oa] (?:del|di|della|al)", r"membro (?:do|da|de|del|della)",
    r"lid van(?: de| het)?", r"członk\w* (?:partii )?", r"член\w*", r"üyesi", r"vota(?: a| al| por| para| per| pelo"
    r"| pela| no| na| em)?", r"votó(?: a| al| por)?", r"votou(?: no| na| em)?", r"vote(?: pour| pour le| pour la)?",
    r"votait(?: pour)?", r"a voté(?: pour)?", r"wählt", r"wählte", r"stemt(?: op)?", r"stemde(?: op)?",
    r"głosuje(?: na)?", r"głosował\w*(?: na)?", r"голосует(?: за)?", r"oy veriyor", r"hace campaña (?:por|para)",
    r"fait campagne pour", r"macht wahlkampf für", r"fa campagna per", r"votante (?:de|del|da|do)",
    r"elector(?:a)? (?:de|del)", r"électeur\w* (?:de|du|des|d['’])", r"wähler(?:in)? (?:der|von|des)",
    r"eleitor(?:a)? (?:de|do|da)", r"elettore (?:del|di|della)", r"elettrice (?:del|di|della)",
    r"simpatizante (?:de|del)",
    r"sympathisant\w* (?:de|du|des|d['’])", r"anhänger(?:in)? (?:der|von|des)", r"apoia (?:o|a)", r"apoya (?:a|al)",
    r"soutient (?:le|la|les)", r"unterstützt (?:die|den|das)", r"sostiene (?:il|la)", r"dona (?:a|al|ao|à)",
    r"spendet (?:an|der|für)",
)

_NOT_AFTER_LEANING = (  # "Es conservador de museo", "is liberal with the salt": a job or a manner
    r"(?!\s+(?:de|du|del|des|au|à|en|im|am|in|at|of|dell\w*|della|do|da|with|about|when|on|for|towards|sobre|über"
    r"|bei)\b)"
)
_NOT_A_TOPIC = (  # "a diabetes charity", "la investigación del cáncer": the term names someone else's work
    r"(?!\s+(?:research|charity|awareness|apps?|ward|clinic|nurses?|doctors?|patients|fundrais\w*|walk|run"
    r"|campaign|stiftung|forschung|station|hilfe|verein|charité|recherche|association|service|investigación"
    r"|fundación|asociación|ricerca|fondazione|associazione|reparto|pesquisa|fundação|associação|onderzoek"
    r"|stichting|afdeling|fundacj\w*|badania?|oddział|отделени\w*)\b)"
)

_PATTERNS: tuple[tuple[str, str, str], ...] = (
    (HEALTH, rf"\b{_HAS}\s+{_FILLER}{_CONDITIONS}(?!\w){_NOT_A_TOPIC}", _CONDITIONS),
    (HEALTH, rf"\b{_HAS}\s+{_FILLER}{_MEDICINES}(?!\w){_NOT_A_TOPIC}", _MEDICINES),
    (HEALTH, rf"\b{_CONDITIONS}\s+(?:\w+\s+){{0,2}}?(?:hastası\w*|hastalığı\w*|teşhisi\w*|tanısı\w*|var\b"
             rf"|tedavi\w*|ilacı\w*)", _CONDITIONS),
    (SEX_LIFE, rf"\b{_IS}\s+{_ARTICLE}{_ORIENTATIONS}(?!\w)", _ORIENTATIONS),
    (SEX_LIFE, r"\b(?:poliamor\w*|polyamour\w*|polyamor\w*|poliamoros\w*|relación abierta|relation libre"
               r"|offene[nr]? beziehung|relazione aperta|relacionamento aberto|open relatie|otwart\w* związ\w*"
               r"|no monógam\w*|non monogam\w*|nicht-?monogam\w*|non-?monogam\w*)"
               r"|\b(?:relaciones|relations|beziehungen|relacionamentos|relazioni|relaties|sale|sort|schläft)"
               r"\s+(?:\w+\s+){0,2}?(?:con|avec|mit|com|met|z)\s+(?:varias|varios|muchas|plusieurs|mehreren|várias"
               r"|vários|più|diverse|meerdere|kilkoma)\s+\w+",
     r"(?:poliamor|polyamour|polyamor|poliamoros|relación|relation|offene|relazione|relacionamento|open|otwart|no"
     r"|non|nicht-monogam|nichtmonogam|non-monogam|relaciones|relations|beziehungen|relacionamentos|relazioni|relaties"
     r"|sale|sort|schläft)"),
    (GENDER_IDENTITY, rf"\b{_GENDER_TERMS}(?!\w)", _GENDER_TERMS),
    (RELIGION, rf"\b{_IS}\s+{_ARTICLE}{_FAITHS}(?!\w){_NOT_AFTER_LEANING}", _FAITHS),
    (RELIGION, r"\b(?:testig[oa]s? de jehová|testemunhas? de jeová|testimon[ei] di geova|témoins? de jéhovah"
               r"|zeugin? jehovas|świadk\w* jehowy|свидетел\w* иеговы|getuigen? van jehova)",
     r"(?:testigo|testigos|testiga|testemunha|testemunhas|testimone|testimoni|témoin|témoins|zeuge|zeugin|świadk"
     r"|свидетел|getuige|getuigen)"),
    (RELIGION, r"\b(?:va|vai|geht|gehen|gaat|chodzi|ходит|sigue|suit|segue|frequenta)\s+(?:\w+\s+){0,4}?"
               r"(?:a misa|à la messe|à messe|alla messa|a messa|à missa|zur messe|in die messe|naar de mis"
               r"|na mszę|a la iglesia|à l['’]église|in die kirche|in chiesa|à igreja|naar de kerk|do kościoła"
               r"|в церковь|a la mezquita|à la mosquée|in die moschee|alla moschea|à mesquita|naar de moskee"
               r"|a la sinagoga|à la synagogue|in die synagoge|in sinagoga|à sinagoga|naar de synagoge"
               r"|al templo|au temple|in den tempel|al tempio|ao templo)",
     r"(?:va|vai|geht|gehen|gaat|chodzi|ходит|sigue|suit|segue|frequenta)"),
    (RELIGION, r"\b(?:reza|betet|prega|bidt|modli się|молится|ayuna|jejua|jeûne|fait le ramadan|fastet|digiuna"
               r"|pości|hace el ramadán|faz o ramadão|faz o ramadã)\b"
               r"|\b(?:come|mange|isst|mangia|eet|je|ест|só come) (?:\w+ )?(?:kosher|halal|casher|cacher|koscher)\b",
     r"(?:reza|betet|prega|bidt|modli|молится|ayuna|jejua|jeûne|fait|fastet|digiuna|pości|hace|faz|kosher|halal"
     r"|casher|cacher|koscher)"),
    (POLITICS, rf"\b{_MEMBER}\s+(?:(?:el|la|los|le|les|l['’]|der|die|den|il|lo|o|a|os|as|de|het)\s+)?"
               rf"{_PARTY_WORDS}(?!\w)", _PARTY_WORDS),
    (POLITICS, rf"\b{_IS}\s+{_ARTICLE}{_LEANINGS}(?!\w){_NOT_AFTER_LEANING}", _LEANINGS),
    (FINANCES, rf"\b{_DEBT}(?!\w)", _DEBT),
    (FINANCES, rf"\b(?:bezieht|bekommt|erhält|lebt von|cobra|recibe|vive del?|vit du|vit de|touche|perçoit"
               rf"|percepisce|riceve|vive con|recebe|vive do|vive de|ontvangt|zit in de|leeft van|pobiera|żyje z"
               rf"|получает|живёт на|geht zur|va al|va a la|va à la|va aux|va au|va alla|vai ao)\s+"
               rf"(?:(?:el|la|le|l['’]|das|den|il|o|a|de|het|des)\s+)?{_BENEFITS}(?!\w)", _BENEFITS),
    (FINANCES, r"\b(?:gana|gano|ganha|ganho|gagne|verdient|verdiene|guadagna|guadagno|verdient|zarabia|зарабатывает"
               r"|kazanıyor)\s+(?:\w+\s+){0,2}?\d[\d.,]*\s?(?:k|mil|mille|tausend|€|euros?|eur|dólares|dollars|\$"
               r"|reais|złotych|zł|рубл\w*|lira|tl)",
     r"(?:gana|gano|ganha|ganho|gagne|verdient|verdiene|guadagna|guadagno|zarabia|зарабатывает|kazanıyor)"),
    (CRIMINAL_RECORD, rf"\b{_OFFENCE_WORDS}(?!\w)", _OFFENCE_WORDS),
    (IMMIGRATION, rf"\b{_MIGRATION}(?!\w)", _MIGRATION),
    (IMMIGRATION, rf"\b(?:{_IS}|llegó como|llegó a \w+ como|arrivée? comme|kam als|chegou como|arrivat[oa] come"
                  rf"|kwam als|przyjechał\w* jako)\s+{_ARTICLE}{_MIGRANTS}(?!\w)", _MIGRANTS),
    (RECOVERY, rf"\b{_RECOVERY_WORDS}(?!\w)", _RECOVERY_WORDS),
    (RECOVERY, rf"\b{_IS}\s+{_ARTICLE}{_ADDICTS}(?!\w)(?!\s+(?:à|aux|au)\s+(?!l['’]alcool|la drogue|la coca"
               rf"|l['’]héro|aux jeux))", _ADDICTS),
    (ORGAN_DONATION, rf"\b{_ORGAN_WORDS}(?!\w)", _ORGAN_WORDS),
    (TRADE_UNION, r"\b(?:delegad[oa] sindical|délégué\w* syndica\w*|delegat[oa] sindacale|vakbondslid"
                  r"|lid van (?:de |een )?vakbond|профсоюз\w*|sendika üye\w*"
                  r"|iscritt[oa] (?:alla|al) (?:cgil|cisl|uil|fiom)"
                  r"|membre (?:de la|du) (?:cgt|cfdt|fo|sud|unsa|cgc|fsu)|afiliad[oa] (?:a|al) (?:ccoo|ugt|cgt|cnt"
                  r"|ela|lab|csif))",
     r"(?:delegad|delegado|delegada|délégué|delegat|delegato|delegata|vakbondslid|lid|профсоюз|sendika|iscritt"
     r"|iscritto|iscritta|membre|afiliad|afiliado|afiliada)"),
)

_UNION_WORDS = _any(  # unions of these countries, and the word for a union
    r"ccoo", r"comisiones obreras", r"ugt", r"cgt", r"cnt", r"ela", r"lab", r"csif", r"uso", r"cig",
    r"intersindical", r"cfdt", r"fo", r"force ouvrière", r"sud", r"unsa", r"cfe-cgc", r"fsu", r"snes", r"cgil", r"cisl",
    r"uil", r"fiom", r"ugl", r"cgtp", r"cut", r"força sindical", r"ig metall", r"ver\.?di", r"gew", r"ig bce",
    r"ig bau", r"evg", r"ngg", r"gdl", r"dgb", r"fnv", r"cnv", r"abvv", r"acv", r"solidarność", r"opzz", r"znp",
    r"sindicato\w*", r"sindacato\w*", r"syndicat\w*", r"gewerkschaft\w*", r"vakbond\w*", r"związk\w* zawodow\w*",
)
_LANGUAGE_MIGRATION = _any(  # procedures of these countries' immigration systems, said of oneself
    r"arraigo (?:social|laboral|familiar|sociolaboral|socioformativo|para la formación)", r"trámite de (?:arraigo"
    r"|residencia|nacionalidad|asilo|regularización)", r"tarjeta de residencia", r"residencia (?:temporal"
    r"|permanente|de larga duración)", r"regularización", r"regularizar (?:su|mi) situación", r"reagrupación familiar",
    r"protección internacional", r"estatuto de refugiad[oa]", r"orden de expulsión", r"expediente de expulsión",
    r"geduldet", r"aufenthaltsgenehmigung", r"niederlassungserlaubnis", r"einbürgerung\w*", r"eingebürgert",
    r"abschiebung\w*", r"abgeschoben", r"termin (?:bei|in) der ausländerbehörde", r"subsidiäre\w* schutz",
    r"asylbescheid", r"récépissé", r"oqtf", r"régularisation", r"carte de résident", r"ofpra", r"cnda",
    r"naturalisée?", r"demande de naturalisation", r"manifestação de interesse", r"cartão de residência",
    r"pedido de (?:nacionalidade|asilo|residência)", r"regularização", r"richiesta di cittadinanza",
    r"protezione (?:internazionale|sussidiaria|umanitaria|speciale)", r"sanatoria", r"asielaanvraag",
    r"inburgering\w*", r"verblijfsstatus", r"statushouder",
)
_GENE_TESTS = _any(
    r"gentest\w*", r"genetische\w* (?:test|untersuchung|analyse)", r"prueba genética", r"test genético",
    r"estudio genético", r"análisis genético", r"teste genético", r"exame genético", r"test génétique",
    r"test genetico", r"genetische test", r"test genetyczn\w*", r"test (?:de |d['’])?adn", r"teste de dna",
    r"test del dna", r"dna-test",
)
_CARRIER = _any(
    r"träger(?:in)? (?:von|des|der|eines|einer)", r"portador(?:a)? (?:de|del|da|do)", r"porteu(?:r|se) (?:de|du|d['’])",
    r"portat(?:ore|rice) (?:di|del|della)", r"draagster van", r"drager van", r"nosiciel\w*",
)
_WORSHIP = _any(
    r"terreiro", r"candombl[eé]", r"umbanda", r"centro espírita", r"culto", r"gottesdienst\w*", r"mesquita",
    r"moschee", r"mezquita", r"mosquée", r"moschea", r"sinagoga", r"synagoge", r"igreja", r"iglesia", r"église",
    r"kirche", r"chiesa", r"kerk", r"misa", r"messe", r"messa", r"missa", r"gurdwara", r"santería", r"catequesis",
    r"catequese", r"catéchisme", r"bibelkreis", r"estudo bíblico", r"estudio bíblico",
)
_LANGUAGE_RECOVERY = _any(
    r"limpi[oa] desde", r"limp[oa] há", r"sin (?:beber|consumir|apostar|jugar) desde", r"sem (?:beber|consumir"
    r"|apostar) há", r"abstinente desde", r"abstinent\w* depuis", r"sobre depuis", r"nüchtern\w* seit",
    r"trocken seit", r"abstinent seit", r"proyecto hombre", r"narcóticos anónimos",
    r"jugadores anónimos", r"anonyme spieler", r"joueurs anonymes", r"giocatori anonimi", r"centre de cure",
    r"suchtklinik", r"suchtberatung", r"entzugsklinik", r"comunità di recupero", r"comunidade terapêutica",
    r"comunidad terapéutica", r"verslavingskliniek", r"verslavingszorg", r"afkickcentrum", r"pulit[oa] dalla",
    r"met drinken (?:ben |is )?gestopt", r"gestopt met drinken",
    r"\d+ (?:dagen|dias|días|jours|giorni|tage|dni|дней) (?:nuchter|sobri[oa]|limpi[oa]|sobre|clean|trocken"
    r"|nüchtern|trzeźw\w*|трезв\w*)",
)
_LANGUAGE_ARREARS = _any(
    r"asnef", r"lista de morosos", r"moros[oa]", r"embargo de (?:la |su |mi )?(?:nómina|sueldo|cuenta)",
    r"le embargaron", r"me embargaron", r"desahucio", r"pfändung\w*", r"gerichtsvollzieher\w*", r"schufa-?eintrag",
    r"negative\w* schufa", r"zwangsräumung", r"huissiers?", r"fiché\w* à la banque de france", r"interdit bancaire",
    r"expulsion locative", r"nome sujo", r"negativad[oa]", r"nome no (?:spc|serasa)", r"sfratto", r"pignoramento",
    r"микроза[йи]м\w*", r"chwilówk\w*", r"mikropożyczk\w*", r"préstamo rápido", r"minicrédito",
)
_LANGUAGE_PREGNANCY = _any(
    r"está de \d+ (?:semanas|meses)", r"ecografía de las \d+ semanas", r"test de embarazo positivo",
    r"espera (?:gemelos|mellizos|un bebé|un hijo|una niña|un niño|su primer)", r"erwartet (?:zwillinge|ein kind"
    r"|ein baby|ihr erstes|sein erstes)", r"in der \d+\. woche", r"attend (?:des jumeaux|un bébé|un enfant"
    r"|son premier|sa première)", r"enceinte de", r"à espera de (?:um bebé|um bebê|gémeos|gêmeos)",
    r"está grávida", r"aspetta (?:un bambino|una bambina|due gemelli|i gemelli)", r"in dolce attesa",
    r"zwanger", r"w ciąży",
)
_LANGUAGE_SEX = _any(
    r"sesso senza preservativo", r"sexe sans (?:préservatif|capote)", r"sexo sin (?:condón|preservativo|protección)",
    r"sexo sem (?:camisinha|preservativo)", r"sex ohne kondom", r"seks zonder condoom", r"seks bez prezerwatywy",
    r"pillola del giorno dopo", r"pilule du lendemain", r"píldora del día después", r"pílula do dia seguinte",
    r"pille danach", r"morning-afterpil",
)
_LANGUAGE_PRACTICE = _any(
    r"camiye gid\w*", r"namaz kıl\w*", r"oruç tut\w*", r"(?:cuentas del|rezo el|reza el|rezar el|reza o|rezo o)"
    r" (?:rosario|terço)", r"sono andat[oa] a messa", r"vado a messa", r"voy a misa", r"vou à missa",
)
_FINGERPRINTS = _any(
    r"impressões digitais", r"huellas(?: dactilares)?", r"empreintes(?: digitales)?", r"fingerabdrücke",
    r"impronte(?: digitali)?", r"odciski palców", r"отпечатки пальцев",
)
_LANGUAGE_ASSESSMENT = _any(
    r"(?:evaluación|valoración|diagnóstico|avaliação|évaluation|bilan|diagnostik|abklärung|valutazione|diagnosi)"
    r" (?:de|del|da|do|du|d['’]|auf|für|per|di|dell['’])\s*(?:\w+ )?(?:autismo|tdah|autisme|autismus|adhs|adhd"
    r"|tdai|dislexia|dyslexie|legasthenie|dislessia|demencia|démence|demenz|bipolar\w*|asperger)",
)
_FAMILIES: tuple[tuple[str, str, str], ...] = (
    (TRADE_UNION, rf"\b(?:delegad[oa]|afiliad[oa]|miembro|militante|representante|enlace|delegat[oa]|iscritt[oa]"
                  rf"|membre|adhérent\w*|délégué\w*|membro|filiad[oa]|sóci[oa]|dirigente|mitglied|vertrauens(?:mann"
                  rf"|frau)|betriebsrät\w*|lid|członek|członkini|está en|está no|está na|est à la|est au|ist in der"
                  rf"|ist bei der|ist bei|bin in der|bin bei der)\s+(?:sindical\s+|syndical\w*\s+|sindacale\s+)?"
                  rf"(?:(?:de|del|da|do|dos|das|en|na|no|a|al|à|ao|della|dello|di|du|de la|der|bei|bei der|in der"
                  rf"|van|van de|la|el|le|o|il|des)\s+){{0,2}}{_UNION_WORDS}(?!\w)", _UNION_WORDS),
    (IMMIGRATION, rf"\b{_LANGUAGE_MIGRATION}(?!\w)", _LANGUAGE_MIGRATION),
    (GENETIC, rf"\b(?:hizo|se hizo|hecho|hice|fez|fiz|feito|a fait|ai fait|ha fatto|hat|habe|hatte|tiene|tem"
              rf"|resultados? del?|resultado do|résultats? du|ergebnis (?:des|seines|ihres)|risultat[oi] del)\s+"
              rf"(?:\w+\s+){{0,2}}?{_GENE_TESTS}(?!\w)", _GENE_TESTS),
    (GENETIC, rf"\b{_CARRIER}\s+(?:\w+\s+){{0,2}}?(?:\w*gen\w*|mutation\w*|mutación|mutação|mutazione|variante"
              rf"|anlage|mukoviszidose|fibrosis quística|fibrose cística|mucoviscidose|fibrosi cistica|sichelzell\w*"
              rf"|drepanocit\w*|drépanocytose|thalass\w*|talasemi\w*|hämochromatose|hemocromatosis|hémochromatose"
              rf"|brca\w*)", _CARRIER),
    (RELIGION, rf"\b(?:va|vai|geht|gehen|gaat|frequenta|frecuenta|fréquente|besucht|asiste a|assiste à"
               rf"|participa (?:do|da|de|en)|sigue|segue)\s+(?:\w+\s+){{0,3}}?{_WORSHIP}(?!\w)", _WORSHIP),
    (RECOVERY, rf"\b{_LANGUAGE_RECOVERY}(?!\w)", _LANGUAGE_RECOVERY),
    (FINANCES, rf"\b{_LANGUAGE_ARREARS}(?!\w)", _LANGUAGE_ARREARS),
    (HEALTH, rf"\b{_LANGUAGE_PREGNANCY}(?!\w)", _LANGUAGE_PREGNANCY),
    (HEALTH, rf"\b{_LANGUAGE_ASSESSMENT}(?!\w)", _LANGUAGE_ASSESSMENT),
    (SEX_LIFE, rf"\b{_LANGUAGE_SEX}(?!\w)", _LANGUAGE_SEX),
    (RELIGION, rf"\b{_LANGUAGE_PRACTICE}(?!\w)", _LANGUAGE_PRACTICE),
    (BIOMETRIC, rf"\b(?:regist\w+|recolh\w+|tomaron|tomaram|pris|prises|abgenommen|rilevat\w+|сняли|сдал\w*)\s+"
                rf"(?:\w+\s+){{0,4}}?{_FINGERPRINTS}(?!\w)|\b{_FINGERPRINTS}\s+(?:\w+\s+){{0,3}}?(?:registad\w+"
                rf"|recolhid\w+|tomadas|prises|abgenommen|rilevate|registrad\w+|gespeichert|enregistrées)(?!\w)",
     _FINGERPRINTS),
)

LANGUAGE_PATTERNS: tuple[tuple[str, re.Pattern[str], str], ...] = tuple(
    (category, re.compile(pattern, re.IGNORECASE), vocabulary)
    for category, pattern, vocabulary in (*_PATTERNS, *_FAMILIES)
)

# --- Chinese, Japanese, Korean ------------------------------------------------------------------------------

_CJK_HEALTH = (
    "糖尿病", "高血压", "高血圧", "고혈압", "당뇨", "癌症", "患癌", "乳腺癌", "肺癌", "胃癌", "肝癌", "がん",
    "ガン", "유방암", "폐암", "위암", "갑상선암", "대장암", "간암", "혈액암", "암 투병", "암 진단", "암 환자",
    "抑郁", "うつ病", "鬱病", "우울증", "焦虑症", "焦虑障碍", "不安障害", "パニック障害", "공황장애",
    "불안장애", "哮喘", "喘息", "천식", "癫痫", "てんかん", "뇌전증", "간질", "多发性硬化", "多発性硬化",
    "다발성 경화", "纤维肌痛", "線維筋痛", "섬유근육통", "自闭症", "自閉症", "자폐", "多动症", "注意欠陥",
    "发育障碍", "発達障害", "双相", "双極性", "양극성", "조울증", "精神分裂", "统合失调", "統合失調", "조현병",
    "艾滋病", "エイズ", "에이즈", "乙肝", "肝炎", "간염", "关节炎", "関節炎", "관절염", "风湿", "リウマチ",
    "류마티스", "帕金森", "パーキンソン", "파킨슨", "阿尔茨海默", "アルツハイマー", "알츠하이머", "认知症",
    "認知症", "치매", "偏头痛", "片頭痛", "편두통", "失眠症", "不眠症", "불면증", "心脏病", "心臓病", "심장병",
    "白血病", "백혈병", "肿瘤", "腫瘍", "종양", "化疗", "抗がん剤", "항암", "透析", "투석", "胰岛素",
    "インスリン", "인슐린", "抗抑郁药", "抗うつ薬", "항우울제", "精神科", "心療内科", "정신과", "心理咨询",
    "心理治疗", "怀孕", "妊娠", "임신", "患有", "确诊", "診断され", "진단을 받", "진단받", "吃药", "服药",
    "薬を飲", "약을 먹", "약을 복용", "通院", "住院", "入院", "입원", "残疾", "障害者", "장애인", "장애가",
    "不孕", "不妊", "난임",
)
_CJK_OTHER: tuple[tuple[str, tuple[str, ...]], ...] = (
    (SEX_LIFE, (
        "同性恋", "双性恋", "无性恋", "男同", "女同", "出柜", "同性愛", "ゲイ", "レズビアン",
        "バイセクシュアル", "アセクシュアル", "カミングアウト", "게이", "레즈비언", "양성애", "동성애",
        "무성애", "커밍아웃", "开放式关系", "オープンリレーションシップ", "多角恋", "ポリアモリー",
        "폴리아모리",
    )),
    (GENDER_IDENTITY, (
        "跨性别", "变性", "トランスジェンダー", "性同一性障害", "性別適合", "트랜스젠더", "성전환", "非二元",
        "ノンバイナリー", "논바이너리", "성별 정정", "性別変更", "性别变更",
    )),
    (RELIGION, (
        "基督徒", "天主教徒", "穆斯林", "佛教徒", "信佛", "信教", "受洗", "做礼拜", "去教堂", "キリスト教徒",
        "クリスチャン", "イスラム教徒", "仏教徒", "創価学会", "教会に通", "礼拝", "기독교인", "크리스천",
        "천주교", "불교 신자", "불교신자", "무슬림", "교회에 다니", "성당에 다니", "절에 다니", "신자",
        "耶和华见证人", "エホバの証人", "여호와의 증인",
    )),
    (POLITICS, (
        "党员", "党員", "당원", "投票给", "投票した", "에 투표", "支持自民党", "支持共产党", "自民党支持",
        "共産党員", "民主党員",
    )),
    (FINANCES, (
        "负债", "欠债", "欠款", "借金", "빚이", "빚을", "破产", "破産", "파산", "低保", "生活保護",
        "기초생활수급", "실업급여", "月薪", "年薪", "年収", "月収", "연봉", "월급이", "信用卡债", "현금서비스",
        "카드값 못", "消费贷", "网贷", "サラ金", "消費者金融",
    )),
    (CRIMINAL_RECORD, (
        "前科", "服刑", "坐牢", "坐过牢", "刑務所", "服役", "교도소", "전과", "缓刑", "執行猶予", "집행유예",
        "被判", "有罪判決", "유죄",
    )),
    (IMMIGRATION, (
        "难民", "難民", "난민", "签证", "ビザ", "비자", "在留資格", "绿卡", "永住権", "영주권", "庇护", "庇護",
        "망명", "黑户", "不法滞在", "불법체류", "居留证", "居留許可",
    )),
    (RECOVERY, (
        "戒酒", "戒毒", "断酒", "禁酒会", "戒赌", "匿名戒酒", "酒精依存", "アルコール依存", "薬物依存",
        "ギャンブル依存", "알코올 중독", "알코올중독", "마약 중독", "도박 중독", "단주", "금주 중",
    )),
    (ORGAN_DONATION, (
        "臓器移植", "器官移植", "肾移植", "肝移植", "移植手術", "移植を受", "이식 수술", "이식을 받",
        "器官捐献", "捐献器官", "臓器提供", "ドナー登録", "장기기증", "骨髓捐献", "骨髄バンク", "肝臓の一部をあげ",
        "肝脏的一部分", "신장을 기증", "간을 기증",
    )),
    (TRADE_UNION, (
        "工会", "労働組合", "労組", "노조", "노동조합", "组合員", "組合員", "조합원",
    )),
    (GENETIC, (
        "基因检测", "基因突变", "遗传病", "遺伝子検査", "遺伝子変異", "遺伝性", "유전자 검사", "유전자 변이",
        "유전병",
    )),
    (BIOMETRIC, (
        "指纹录入", "录入指纹", "人脸信息", "指紋を登録", "顔認証を登録", "지문을 등록", "지문 등록", "홍채", "声纹",
        "声音来确认身份", "声音确认身份", "声で本人確認", "목소리로 본인",
    )),
)
CJK_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (HEALTH, re.compile("|".join(map(re.escape, _CJK_HEALTH)))),
    *((category, re.compile("|".join(map(re.escape, words)))) for category, words in _CJK_OTHER),
)
# A Chinese, Japanese or Korean text about work, study or a topic names the condition without stating it.
CJK_NOT_ABOUT_THEM = re.compile(
    r"研究|工作|上班|医生|护士|药店|学习|专业|专攻|老师|教授|纪录片|电影|小说|书|働い|勤務|看護師|医師|薬剤師"
    r"|専攻|勉強|映画|ドキュメンタリー|小説|本を|病院の受付|일하|근무|의사|간호사|약사|연구|공부|전공|영화|다큐|소설|책을"
)
# A book, film, course, study, clinic or charity about the words, in these languages: they name a topic or a
# workplace, not the user.
TOPIC = re.compile(
    r"\b(?:libros?|livres?|bücher|buch|libri|livros?|boeken?|książk\w*|blog|podcast|documental(?:es)?|documentaires?"
    r"|dokumentation\w*|documentari[oa]|documentários?|películas?|films?|filme?|serie[ns]?|séries?|artículos?"
    r"|articles?|artikel|articol[oi]|artigos?|tesis|thèse|tesi|masterarbeit|doktorarbeit|investigación|recherches?"
    r"|forschung|ricerca|pesquisa|onderzoek|badani\w*|cursos?|cours|kurs\w*|cors[oi]|vortrag|conferencia"
    r"|conférence|conferenza|palestra|clínicas?|clinicas?|cliniques?|kliniks?|unidad|abteilung|reparto|ambulatorio"
    r"|fundación|fondation|stiftung|fondazione|fundação|asociación|associazione|associação)\s+(?:\w+\s+)?"
    r"(?:sobre|sur|über|su|sul|sulla|sui|over|o|об|про|de|del|zum"
    r"|zur|des)\b",
    re.IGNORECASE,
)
# Somebody of the user's (relatives, partners, friends, pets) in these languages: what follows is about them.
OTHER_PEOPLE = re.compile(
    r"\b(?:su|sus|mi|mis|sa|son|ses|ma|mon|mes|sein\w*|ihr\w*|mein\w*|il suo|la sua|i suoi|sua|seu|seus|suas|zijn"
    r"|haar|mijn|jego|jej|moj\w*|его|её|ее|мой|моя)\s+(?:\w+\s+)?(?:madre|padre|hermana|hermano|hij[oa]s?|espos[oa]"
    r"|marido|mujer|novi[oa]|pareja|amig[oa]s?|abuel[oa]|tí[oa]|prim[oa]|perro|gato|mère|père|sœur|soeur|frère"
    r"|fils|fille|mari|femme|copain|copine|ami|amie|amis|grand-mère|grand-père|chien|chat|mutter|vater|schwester"
    r"|bruder|sohn|tochter|mann|frau|freund\w*|oma|opa|hund|katze|sorella|fratello|figli[oa]|moglie|ragazz[oa]"
    r"|nonn[oa]|cane|gatto|mãe|pai|irmã|irmão|filh[oa]s?|namorad[oa]|avó|avô|cachorro|cão|moeder|vader|zus|broer"
    r"|zoon|dochter|vrouw|vriend\w*|hond|kat|matka|ojciec|siostr\w*|brat\w*|syn\w*|córk\w*|żon\w*|mąż|męża|pies|kot"
    r"|мать|мама|отец|папа|сестр\w*|брат\w*|сын\w*|дочь|муж\w*|жена|друг\w*|собак\w*|кошк\w*)\b"
    r"|\b(?:un|una|um|uma|ein\w*|une?|een|el|la|le|der|die|den|il|o|a)\s+(?:\w+\s+)?(?:perr[oa]|gat[oa]|chien\w*"
    r"|chat|chatte|hund|katze|cane|gatt[oa]|cão|cachorr[oa]|hond|kat|pies|kot)\b"
    r"|(?:妈妈|母亲|爸爸|父亲|哥哥|姐姐|弟弟|妹妹|孩子|儿子|女儿|丈夫|妻子|老公|老婆|朋友|猫|狗|母|父|兄|姉|息子|娘|夫|妻|友達"
    r"|友人|엄마|아빠|어머니|아버지|형이|누나|언니|오빠|동생|아들|딸|남편|아내|친구|고양이|강아지)",
    re.IGNORECASE,
)
