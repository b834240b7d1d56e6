"""A seeded synthetic Chinese fact-selection set: text without spaces between words, with known relevant facts.

One heavy user's memory: two facts per topic entity (hobbies, places, foods, jobs, studies, pets: two aspects
each, e.g. "likes X every weekend" and "hurt an ankle doing X") plus generic distractor facts. Each entity fact
gets one paraphrased query, written the way a user would chat, wrapped in chat filler; its source fact is the
relevant one. Queries share some characters or words with their fact, never the whole fact, and often use a
variant of the entity ("登山" for "爬山", "水饺" for "饺子"). Entities are chosen to collide on characters
(打篮球 / 打排球 / 打网球, 北京 / 南京 / 东京 / 京都, 摄影 / 摄影师), so matching single characters is not enough.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

# (form in the fact, form in the query)
HOBBIES = (
    ("爬山", "登山"), ("游泳", "游泳"), ("钓鱼", "去河边钓鱼"), ("弹吉他", "练吉他"), ("下围棋", "下棋"),
    ("打篮球", "打篮球"), ("打排球", "打排球"), ("打网球", "打网球"), ("打羽毛球", "打羽毛球"), ("打乒乓球", "打乒乓"),
    ("踢足球", "踢球"), ("摄影", "练摄影"), ("烘焙", "烘焙蛋糕"), ("跑马拉松", "跑全马"), ("画油画", "画画"),
    ("练书法", "练字"), ("骑自行车", "骑车"), ("滑雪", "去滑雪场"), ("冲浪", "冲浪"), ("练瑜伽", "做瑜伽"),
    ("跳街舞", "跳舞"), ("攀岩", "室内攀岩"), ("露营", "野外露营"), ("潜水", "潜水"), ("织毛衣", "织围巾"),
    ("拼乐高", "拼积木"), ("下象棋", "下象棋"), ("玩桌游", "桌游"), ("做陶艺", "捏陶土"), ("看科幻小说", "读科幻书"),
)
PLACES = tuple(
    (p, p)
    for p in (
        "北京", "上海", "广州", "深圳", "成都", "杭州", "南京", "西安", "重庆", "武汉", "厦门", "青岛", "大阪",
        "东京", "京都", "首尔", "新加坡", "伦敦", "巴黎", "柏林", "纽约", "悉尼", "温哥华", "台北", "香港",
    )
)
FOODS = (
    ("火锅", "麻辣火锅"), ("寿司", "寿司"), ("饺子", "水饺"), ("拉面", "日式拉面"), ("小笼包", "小笼"),
    ("北京烤鸭", "烤鸭"), ("麻辣烫", "麻辣烫"), ("煎饼果子", "煎饼"), ("肠粉", "广式肠粉"), ("螺蛳粉", "螺蛳粉"),
    ("牛肉面", "兰州牛肉面"), ("担担面", "担担面"), ("酸菜鱼", "酸菜鱼"), ("红烧肉", "红烧肉"), ("披萨", "意式披萨"),
    ("咖喱饭", "咖喱"), ("提拉米苏", "提拉米苏蛋糕"), ("珍珠奶茶", "奶茶"), ("手冲咖啡", "咖啡"), ("抹茶冰淇淋", "抹茶"),
    ("生煎包", "生煎"), ("臭豆腐", "臭豆腐"), ("烤串", "烧烤串"), ("豆浆油条", "油条"), ("芒果", "芒果"),
)
JOBS = (
    ("程序员", "程序员"), ("护士", "护士"), ("中学老师", "老师"), ("律师", "律师"), ("平面设计师", "设计师"),
    ("厨师", "厨师"), ("牙医", "牙医"), ("会计", "会计"), ("记者", "记者"), ("摄影师", "摄影师"),
    ("土木工程师", "工程师"), ("销售", "销售"), ("翻译", "翻译"), ("建筑师", "建筑设计"), ("研究员", "研究员"),
    ("产品经理", "产品经理"), ("数据分析师", "数据分析"), ("心理咨询师", "心理咨询"), ("飞行员", "飞行员"),
    ("消防员", "消防员"),
)
STUDIES = (
    ("日语", "日语"), ("法语", "法语"), ("德语", "德语"), ("韩语", "韩语"), ("西班牙语", "西语"),
    ("英语口语", "英语口语"), ("钢琴", "钢琴"), ("小提琴", "小提琴"), ("Python编程", "Python"),
    ("机器学习", "机器学习"), ("数据库", "SQL数据库"), ("素描", "素描"), ("注册会计师", "注会"), ("驾照", "驾照"),
    ("烹饪", "烹饪课"),
)
PETS = (
    ("猫", "猫"), ("狗", "狗"), ("仓鼠", "仓鼠"), ("兔子", "兔子"), ("鹦鹉", "鹦鹉"), ("乌龟", "乌龟"),
    ("金鱼", "金鱼"), ("柯基犬", "柯基"), ("布偶猫", "布偶"), ("金毛犬", "金毛"),
)
PET_NAMES = ("豆豆", "球球", "咪咪", "旺财", "年糕", "可乐", "布丁", "花卷", "小七", "芝麻")

# category -> ((fact template, (query templates...)), (fact template, (query templates...)))
ASPECTS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "hobby": (
        ("喜欢{e}，几乎每个周末都会去", ("这个周末天气不错，你说我去{q}好不好？", "周末有空，想约朋友一起{q}")),
        ("{e}的时候扭伤过脚踝，现在比较小心", ("脚踝还有点疼，下周还能{q}吗？", "{q}怎么热身才不容易扭到脚")),
    ),
    "place": (
        ("住在{e}，已经在那里生活了五年", ("{q}这几天的天气怎么样？出门要带伞吗", "{q}哪里租房子比较便宜")),
        ("计划明年春天去{e}旅行", ("明年春天想去{q}玩，帮我排个行程吧", "春天去{q}穿什么衣服合适")),
    ),
    "food": (
        ("最爱吃的是{e}", ("今晚想吃{q}，附近有什么好店吗", "{q}在家怎么做才好吃？")),
        ("对{e}过敏，吃了会起疹子", ("朋友请我吃{q}，可我好像会过敏，怎么办", "吃完{q}身上起了疹子")),
    ),
    "job": (
        ("职业是{e}，在一家大公司上班", ("做{q}这一行，怎么跟领导谈加薪？", "当{q}每天加班到很晚，正常吗")),
        ("大学毕业后想转行当{e}", ("转行去当{q}难不难？需要考什么证", "零基础转{q}要准备多久")),
    ),
    "study": (
        ("正在学习{e}，每天练习一个小时", ("{q}入门有什么好的教材吗", "每天练一小时{q}够不够")),
        ("{e}考试下个月就要考了，有点紧张", ("下个月就考{q}了，怎么缓解紧张", "{q}考试前一周该怎么复习")),
    ),
    "pet": (
        ("养了一只{e}，名字叫{name}", ("我家{q}最近不爱吃东西，是不是生病了", "给{q}买什么牌子的粮比较好")),
        ("家里的{e}经常半夜吵醒自己", ("{q}半夜老是闹，我都睡不好", "怎么让{q}晚上安静一点")),
    ),
}
ENTITIES = {"hobby": HOBBIES, "place": PLACES, "food": FOODS, "job": JOBS, "study": STUDIES, "pet": PETS}

DISTRACTORS = (
    "回答问题时喜欢简短直接", "不喜欢早上九点前开会", "经常熬夜到凌晨两点", "正在准备下个月的面试", "会说普通话和粤语",
    "最近在减肥，晚饭只吃沙拉", "每天通勤要一个半小时", "周末喜欢在家看电影", "喜欢用机械键盘打字", "对咖啡因比较敏感",
    "希望别人给意见时说得直接一点", "有两个妹妹，都还在上学", "刚搬了新家，正在装修", "不太喜欢人多的地方", "每年春节都回老家",
    "手机用了四年还没换", "习惯用番茄钟安排工作", "喜欢听老歌，尤其是九十年代的", "最近在追一部悬疑剧", "开车去公司要四十分钟",
    "在考虑要不要读研究生", "喜欢把周计划写在纸上", "不太会做饭，常点外卖", "很少发朋友圈", "睡前喜欢看一会儿书",
    "讨厌下雨天出门", "正在存钱买房", "每个月给父母打钱", "最近开始记账", "喜欢安静的咖啡馆",
    "对猫毛有点过敏", "左手写字", "视力不太好，戴眼镜", "喜欢夏天胜过冬天", "说话带一点四川口音",
    "每天早上喝一杯温水", "用的是安卓手机", "喜欢在地铁上听播客", "不喜欢香菜", "常常忘记带钥匙",
)
FILLERS_BEFORE = ("", "对了，", "哈哈，", "说真的，", "嗯，", "问你个事，", "今天好累，", "突然想到，")
FILLERS_AFTER = ("", "谢谢！", "你觉得呢？", "急，在线等", "有点纠结", "")


@dataclass(frozen=True, slots=True)
class CjkSet:
    facts: list[str]  # fact contents, no spaces between words
    queries: list[tuple[str, int]]  # (query text, index of its relevant fact)


def build(seed: int = 7) -> CjkSet:
    rng = random.Random(seed)
    facts: list[str] = []
    queries: list[tuple[str, int]] = []
    for category, entities in ENTITIES.items():
        for fact_form, query_form in entities:
            for fact_template, query_templates in ASPECTS[category]:
                index = len(facts)
                facts.append(fact_template.format(e=fact_form, name=rng.choice(PET_NAMES)))
                query = rng.choice(query_templates).format(q=query_form)
                queries.append((rng.choice(FILLERS_BEFORE) + query + rng.choice(FILLERS_AFTER), index))
    facts.extend(DISTRACTORS)
    # Shuffle facts (the order a memory file has is arbitrary), keeping the query -> fact mapping.
    order = list(range(len(facts)))
    rng.shuffle(order)
    position = {old: new for new, old in enumerate(order)}
    shuffled = [facts[old] for old in order]
    rng.shuffle(queries)
    return CjkSet(shuffled, [(text, position[index]) for text, index in queries])
