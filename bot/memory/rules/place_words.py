"""Places and the words made from them ("Norway" and "Norwegian", "Wales" and "Welsh", "Peru" and "Peruvian"), for
the forget gate (`bot.memory.rules.forgotten`): a model that paraphrases "from Norway" writes "Norwegian", and no
suffix rule turns one into the other. English names, folded to lower case without accents; one place per line,
its words after it. Pure data.
"""

from __future__ import annotations

_TABLE = """
afghanistan afghan afghani
albania albanian
algeria algerian
andalusia andalusian andaluz
argentina argentine argentinian argentinean
armenia armenian
australia australian aussie
austria austrian
azerbaijan azerbaijani azeri
bangladesh bangladeshi
basque euskadi
bavaria bavarian
belarus belarusian
belgium belgian
bolivia bolivian
bosnia bosnian
brazil brazilian
britain british brit
brittany breton
bulgaria bulgarian
burma burmese myanmar
cambodia cambodian khmer
cameroon cameroonian
canada canadian
catalonia catalan catalunya
chile chilean
china chinese
colombia colombian
cornwall cornish
corsica corsican
croatia croatian croat
cuba cuban
cyprus cypriot
czechia czech
denmark danish dane
ecuador ecuadorian
egypt egyptian
england english
estonia estonian
ethiopia ethiopian
fiji fijian
finland finnish finn
flanders flemish
france french
galicia galician
georgia georgian
germany german
ghana ghanaian
greece greek
greenland greenlandic
guatemala guatemalan
haiti haitian
holland dutch netherlands
hungary hungarian magyar
iceland icelandic icelander
india indian
indonesia indonesian
iran iranian persian persia
iraq iraqi
ireland irish
israel israeli
italy italian
jamaica jamaican
japan japanese
jordan jordanian
kazakhstan kazakh
kenya kenyan
korea korean
kosovo kosovar
kuwait kuwaiti
laos lao laotian
latvia latvian
lebanon lebanese
libya libyan
lithuania lithuanian
luxembourg luxembourgish luxembourger
madagascar malagasy
malaysia malaysian
mali malian
malta maltese
mexico mexican
moldova moldovan
monaco monegasque
mongolia mongolian
montenegro montenegrin
morocco moroccan
mozambique mozambican
nepal nepali nepalese
nigeria nigerian
normandy norman
norway norwegian norse
pakistan pakistani
palestine palestinian
panama panamanian
paraguay paraguayan
peru peruvian
philippines filipino filipina philippine
poland polish
portugal portuguese
provence provencal
quebec quebecois quebecer
romania romanian
russia russian
rwanda rwandan
sardinia sardinian
saudi arabia arabian
scotland scottish scot scots
senegal senegalese
serbia serbian serb
sicily sicilian
singapore singaporean
slovakia slovak slovakian
slovenia slovenian slovene
somalia somali
spain spanish spaniard
sri lanka lankan
sudan sudanese
sweden swedish swede
switzerland swiss
syria syrian
taiwan taiwanese
tanzania tanzanian
thailand thai
tibet tibetan
tunisia tunisian
turkey turkish turk
tuscany tuscan
uganda ugandan
ukraine ukrainian
uruguay uruguayan
uzbekistan uzbek
venezuela venezuelan
vietnam vietnamese
wales welsh
yemen yemeni
yorkshire yorkshireman
zambia zambian
zimbabwe zimbabwean
america american yank
berlin berliner
edinburgh edinburgher
florence florentine
glasgow glaswegian
liverpool liverpudlian scouse scouser
london londoner
madrid madrileno
manchester mancunian
milan milanese
moscow muscovite
naples neapolitan
newcastle geordie
new york new yorker
paris parisian
rome roman
venice venetian
vienna viennese
"""


def _family_of() -> dict[str, frozenset[str]]:
    """Each one-word name or adjective, and every one-word word of its line."""
    family: dict[str, frozenset[str]] = {}
    for line in _TABLE.strip().splitlines():
        words = frozenset(word for word in line.split() if word not in {"new", "saudi", "sri"})
        for word in words:
            family[word] = family.get(word, frozenset()) | words
    return family


PLACE_FAMILY: dict[str, frozenset[str]] = _family_of()
