"""The function words of the other languages of Latin script the bot speaks (Spanish, French, German, Portuguese,
Italian): articles, pronouns, prepositions and the commonest verbs. None is a word a fact is about
(`bot.memory.rules.forgotten`), and none is the value after a password's name ("Passwort ... steht auf dem
Aufkleber", "a senha do cofre do quarto de hotel": `bot.memory.rules.credential_words`). Those that are words of
their own in English ("son", "die", "war", "hat") or names ("Como") are left out."""

_WORDS = (
    """el la los las un una unos unas del al de en y o pero que se su sus mi mis tu es está están fue ser estar
    hace hacen tiene tienen todo todos toda todas cada muy más menos este esta estos estas ese esa otro otra vez por
    para sobre entre desde hasta cuando donde también ya siempre nunca ahora hoy le les lo nos du des une et ou mais
    qui dans sur avec pour par pas plus tous toutes tout toute chaque très aussi toujours jamais aujourd'hui est
    sont était être avoir fait font ces cette mon ma mes ta tes leur leurs nous vous ils elles der das dem ein eine
    einen einem einer und oder aber mit von zu im am ist sind haben macht jeden jede jedes alle sehr auch immer nie
    heute sein seine ihr ihre mein meine nicht noch schon wie wo wenn um os uma uns umas em no na nas ao aos da do
    dos com sem pelo pela é são foi estão tem têm faz fazem muito também sempre hoje seu sua seus suas meu minha il
    gli della delle dei degli nel nella per tra fra anche mai oggi sono ogni molto più suo suoi mio"""
)
OTHER_LANGUAGES = frozenset(_WORDS.split())
