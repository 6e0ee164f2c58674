"""Write src/confcal/data/docqa_sample.jsonl: the synthetic DocBench-style QA sample.

Synthetic, seeded and byte-for-byte reproducible::

    python scripts/make_docqa_sample.py          # rewrite the file
    python scripts/make_docqa_sample.py --check  # exit 1 if the file differs

Ten invented documents (two per DocBench domain; no real document, person or body is
described) and forty hand-written questions, eight per domain: three text-only, two
multimodal (a figure or table), two meta-data and one unanswerable. Each question has a
reference answer, the evidence text, and four hand-written answers: a right and a wrong one
in a terse style and in a verbose style. A few are written to be hard for string rules, as
real answers are: a number in words ("two hundred and forty"), a unit converted ("within
three days" for 72 hours), a hedged yes/no, a wrong answer that quotes the reference name.

Three simulated systems answer every question (120 records):

- ``sim-careful`` mixes both styles, is right about 75% of the time (less on figures and
  tables) and states a confidence with each answer, higher when it is right but with
  overlap (an informative, imperfect confidence). Its answers carry human verdicts (the
  ``human`` column): the label the answer was written with.
- ``sim-terse`` answers in the terse style, is right about 60% of the time and leaves some
  questions unanswered (an empty answer).
- ``sim-verbose`` answers in full sentences, is right about 65% of the time and tends to
  invent answers to unanswerable questions.

Only ``random.Random(seed).random()`` is drawn, whose sequence Python keeps stable across
versions, and confidences are rounded to two decimals, so the bytes do not depend on the
platform.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

SEED = 20240610
OUT = Path(__file__).resolve().parents[1] / "src" / "confcal" / "data" / "docqa_sample.jsonl"

# (doc_id, domain, qtype, question, reference, evidence,
#  right_terse, right_verbose, wrong_terse, wrong_verbose)
QUESTIONS: tuple[tuple[str, ...], ...] = (
    # ---- academia: aca-01 "Nitrogen cycling in restored wetland soils", aca-02 "Pruning
    # attention heads in small language models" (both invented)
    ("aca-01", "academia", "text-only",
     "How many soil cores were collected in the field campaign?", "240 soil cores",
     "In total, 240 soil cores were collected across the six restored sites.",
     "240", "The field campaign collected two hundred and forty soil cores at six restored sites.",
     "24", "The authors collected 420 soil cores from the wetland sites."),
    ("aca-01", "academia", "text-only",
     "Did nitrate levels decrease after restoration?", "Yes",
     "Nitrate concentrations fell by 38% in the three years after restoration.",
     "Yes.", "Yes, nitrate concentrations fell by 38% within three years of restoration.",
     "No.", "Yes and no: nitrate rose at first and was no lower after three years."),
    ("aca-02", "academia", "text-only",
     "Which pruning criterion performed best?", "Gradient-based importance scores",
     ("Gradient-based importance scores outperformed magnitude and random pruning at every "
     "sparsity level."),
     "Gradient-based importance",
     ("Among the criteria compared, gradient-based importance scores gave the best results at "
     "every sparsity level."),
     "Magnitude pruning", "Random pruning performed best once sparsity exceeded 50 percent."),
    ("aca-01", "academia", "multimodal",
     "According to Figure 3, what share of nitrogen loss was due to denitrification?", "62%",
     ("Figure 3: denitrification accounts for 62% of total nitrogen loss; leaching 27%; plant "
     "uptake 11%."),
     "0.62", "Figure 3 shows that denitrification accounts for about 62 percent of nitrogen loss.",
     "27%", "Figure 3 attributes 11% of nitrogen loss to denitrification."),
    ("aca-02", "academia", "multimodal",
     "In Table 2, what accuracy does the pruned model reach at 50% sparsity?", "91.4%",
     ("Table 2: accuracy 93.0% (dense), 92.6% (30% sparsity), 91.4% (50% sparsity), 87.9% "
     "(70% sparsity)."),
     "91.4%", "At 50% sparsity the pruned model reaches 91.4% accuracy, according to Table 2.",
     "92.6%", "Table 2 reports 87.9% accuracy at 50% sparsity."),
    ("aca-01", "academia", "meta-data",
     "Who are the authors of the paper?", "Maya Okafor and Lukas Brandt",
     "Maya Okafor, Lukas Brandt - Department of Ecology",
     "Maya Okafor and Lukas Brandt",
     "The paper was written by Maya Okafor together with Lukas Brandt.",
     "Maya Okafor and Lena Braun", "The paper was written by Lukas Brandt alone."),
    ("aca-02", "academia", "meta-data",
     "In which year was the paper published?", "2022",
     "Published in the Proceedings of the Workshop on Efficient NLP, 2022.",
     "2022", "The paper appeared in the 2022 proceedings of the Workshop on Efficient NLP.",
     "2021", "It was published in 2024 in a workshop proceedings volume."),
    ("aca-02", "academia", "unanswerable",
     "How much did the authors spend on cloud computing?",
     "The paper does not mention the cost of cloud computing.", "",
     "Not mentioned.", "The paper does not say how much was spent on cloud computing.",
     "$12,000", "The authors spent about $4,500 on cloud GPUs for the experiments."),
    # ---- finance: fin-01 Northwind Tools annual report 2023, fin-02 Harbor Bond Fund
    # quarterly report (both invented)
    ("fin-01", "finance", "text-only",
     "What was Northwind Tools' net revenue in 2023?", "$5.5 million",
     "Net revenue for fiscal 2023 was $5.5 million, up from $4.9 million in 2022.",
     "5,500,000 dollars",
     "Northwind Tools reported net revenue of $5.5M for fiscal 2023, up from $4.9M.",
     "$4.9 million", "Net revenue in 2023 reached $55 million according to the annual report."),
    ("fin-01", "finance", "text-only",
     "Did the company pay a dividend in 2023?", "No, the board suspended the dividend.",
     "The board suspended the dividend for 2023 to fund the new plant.",
     "No.", "No. The board suspended the 2023 dividend to finance the new plant.",
     "Yes.", "Yes, it paid a dividend of $0.40 per share."),
    ("fin-02", "finance", "text-only",
     "What share of the fund was invested in government bonds?", "45%",
     "Government bonds made up 45% of net assets at 30 June 2024.",
     "0.45", "Government bonds represented 45 percent of the fund's net assets.",
     "54%", "About 35% of net assets were held in government bonds."),
    ("fin-01", "finance", "multimodal",
     "According to the segment table, how many employees did the Tools segment have?", "1,240",
     "Table 4: Tools segment 1,240 employees; Services segment 310 employees.",
     "1240", "The segment table lists 1,240 employees in the Tools segment.",
     "310", "The Tools segment employed 1,420 people according to Table 4."),
    ("fin-02", "finance", "multimodal",
     "In the duration chart, what was the fund's duration at the end of the quarter?",
     "6.2 years",
     "Figure 2 (line chart): duration rose from 5.8 years in April to 6.2 years at quarter end.",
     "6.2 years", "The chart shows the duration ending the quarter at 6.2 years, up from 5.8.",
     "5.8 years", "Duration fell to 4.9 years by the end of the quarter."),
    ("fin-01", "finance", "meta-data",
     "How many pages does the annual report have?", "48", "Page 48 of 48",
     "48 pages", "The annual report runs to 48 pages in total.",
     "84", "The report is 36 pages long."),
    ("fin-02", "finance", "meta-data",
     "What is the date of the quarterly report?", "30 June 2024",
     "Quarterly report as of 30 June 2024",
     "2024-06-30", "The report is dated June 30, 2024.",
     "2024-03-31", "The report is dated 31 March 2024."),
    ("fin-01", "finance", "unanswerable",
     "What is the CEO's annual salary?", "Not mentioned in the report.", "",
     "The report does not state it.", "The annual report does not disclose the CEO's salary.",
     "$850,000", "The CEO earns an annual salary of $1.2 million."),
    # ---- government: gov-01 Riverton transit budget 2025, gov-02 a public health agency's
    # annual report (both invented)
    ("gov-01", "government", "text-only",
     "How much funding was allocated to bus fleet electrification?", "$18.4 million",
     "The budget allocates $18.4 million to electrify the bus fleet by 2027.",
     "$18,400,000",
     "The transit budget sets aside 18.4 million dollars for bus fleet electrification.",
     "$8.4 million", "About $184 million is allocated to electrifying buses."),
    ("gov-01", "government", "text-only",
     "When does the new fare policy take effect?", "March 1, 2025",
     "The revised fare policy takes effect on March 1, 2025.",
     "03/01/2025", "The new fare policy takes effect on 1 March 2025.",
     "April 1, 2025", "The fare policy starts on 2025-01-01."),
    ("gov-02", "government", "text-only",
     "Is the vaccination programme free of charge for children?", "Yes",
     "Vaccines in the childhood programme are free of charge.",
     "Correct", "Yes, all childhood vaccines in the programme are provided free of charge.",
     "No", "No, parents pay a reduced fee for each vaccine."),
    ("gov-02", "government", "multimodal",
     ("According to the bar chart, what percentage of adults were vaccinated against "
     "influenza in 2023?"), "57%",
     "Figure 5: influenza vaccination among adults: 2021 49%, 2022 53%, 2023 57%.",
     "57 percent",
     "The bar chart shows that 57% of adults were vaccinated against influenza in 2023.",
     "53%", "Roughly 75% of adults received a flu vaccine in 2023."),
    ("gov-01", "government", "multimodal",
     "In the ridership table, how many weekday riders did Line 2 carry?", "42,300",
     "Table 1: average weekday ridership: Line 1 58,900; Line 2 42,300; Line 3 17,650.",
     "42300", "Line 2 carried about 42,300 riders on an average weekday.",
     "58,900", "The table shows 17,650 weekday riders on Line 2."),
    ("gov-01", "government", "meta-data",
     "Which office published the transit budget?",
     "The Riverton Office of Budget and Management",
     "Prepared by the Riverton Office of Budget and Management",
     "Office of Budget and Management",
     "It was published by Riverton's Office of Budget and Management.",
     "Riverton Transit Authority",
     "The budget was published by the city council's finance committee."),
    ("gov-02", "government", "meta-data",
     "How many chapters does the annual report contain?", "Seven", "Contents: chapters 1-7",
     "7", "The annual report is organised in seven chapters.",
     "9", "It contains twelve chapters and two annexes."),
    ("gov-02", "government", "unanswerable",
     "How many staff members does the agency employ?",
     "The report does not provide this information.", "",
     "No information is provided.",
     "The annual report does not specify how many staff the agency employs.",
     "1,150", "The agency employs roughly 2,300 staff across its regional offices."),
    # ---- laws: law-01 an invented Residential Tenancies Act 2019, law-02 an invented data
    # protection regulation
    ("law-01", "laws", "text-only",
     "How much notice must a landlord give before entering the rental unit?", "24 hours",
     ("Section 12: a landlord must give at least 24 hours' written notice before entering the "
     "rental unit."),
     "24 hours", "The landlord has to give at least 24 hours' written notice before entry.",
     "48 hours", "A landlord must give seven days' notice before entering."),
    ("law-01", "laws", "text-only",
     "Can a landlord increase the rent more than once in a 12-month period?", "No",
     "Section 19: rent may not be increased more than once in any 12-month period.",
     "No, only once per 12 months.",
     "No. Section 19 allows at most one rent increase in any 12-month period.",
     "Yes", "Yes, provided the tenant receives written notice each time."),
    ("law-02", "laws", "text-only",
     "Within how many hours must a data breach be reported to the authority?", "72 hours",
     ("Article 33: notify the supervisory authority within 72 hours of becoming aware of the "
     "breach."),
     "72", "Within three days of becoming aware of the breach.",
     "48 hours", "Breaches have to be reported within 24 hours."),
    ("law-02", "laws", "multimodal",
     "According to the fines table, what is the maximum fine for a serious infringement?",
     "€20 million or 4% of annual turnover",
     ("Table A: serious infringements: up to €20 million or 4% of worldwide annual turnover, "
     "whichever is higher."),
     "EUR 20 million or 4 percent of turnover",
     ("For a serious infringement the table sets the maximum fine at €20 million or 4% of "
     "worldwide annual turnover, whichever is higher."),
     "€10 million or 2% of turnover",
     "The maximum fine is €20 million, with no turnover-based alternative."),
    ("law-01", "laws", "multimodal",
     "In the eviction flowchart, what is the first step a landlord must take?",
     "Serve a written notice to the tenant",
     ("Figure 1 (flowchart): 1. Serve written notice to the tenant; 2. Apply to the tribunal; "
     "3. Tribunal hearing; 4. Enforcement order."),
     "Serve written notice on the tenant",
     ("According to the flowchart, the landlord first has to serve the tenant with a written "
     "notice."),
     "Apply to the tribunal", "The first step is to apply to the tribunal for a hearing."),
    ("law-01", "laws", "meta-data",
     "In which year was the Act enacted?", "2019", "Residential Tenancies Act 2019",
     "2019", "The Act was enacted in 2019.",
     "2009", "It was passed by the legislature in 2021."),
    ("law-02", "laws", "meta-data",
     "How many articles does the regulation contain?", "99 articles",
     "Article 99: Entry into force",
     "99", "The regulation is made up of 99 articles.",
     "88", "It contains 173 recitals and 91 articles."),
    ("law-02", "laws", "unanswerable",
     "What penalty applies to a first-time jaywalking offence?",
     "The document does not contain this information.", "",
     "Not stated in the regulation.", ("The regulation does not mention any penalty for "
                                      "jaywalking."),
     "A €50 fine", "A first offence is punished with a warning."),
    # ---- news: news-01 an article on the (invented) Port of Calder expansion, news-02
    # coverage of an (invented) mayoral election
    ("news-01", "news", "text-only",
     "How many new berths will the port expansion add?", "Four",
     "The expansion will add four deep-water berths by 2028.",
     "4", "The expansion will add four new deep-water berths.",
     "14", "It will add two container berths and a ferry terminal."),
    ("news-01", "news", "text-only",
     "Who is the port authority's chief executive?", "Dana Whitfield",
     ('"This is the biggest investment in a generation," said Dana Whitfield, chief executive '
     "of the port authority."),
     "Dana Whitfield", "The port authority's chief executive is Dana Whitfield.",
     "Dan Whitford",
     "Dana Whitfield is quoted as the former chief executive; the current one is Marcus Lee."),
    ("news-02", "news", "text-only",
     "When was the mayoral election held?", "5 November 2024",
     "Voters went to the polls on 5 November 2024.",
     "Nov. 5, 2024", "The election took place on 2024-11-05.",
     "November 4, 2024", "The mayoral election was held on 12 November 2024."),
    ("news-02", "news", "multimodal",
     ("According to the results chart, what share of the vote did the winning candidate "
     "receive?"), "52.3%", "Chart: Ortega 52.3%, Hale 41.8%, others 5.9%.",
     "52.3 percent", "The chart shows the winner, Ortega, receiving 52.3% of the vote.",
     "41.8%", "The winning candidate received just under half of the vote, 48%."),
    ("news-01", "news", "multimodal",
     "According to the map, how long is the new breakwater?", "1.8 km",
     "Map: the new breakwater (1.8 km) extends north of the existing pier.",
     "1.8 kilometres", "The map shows that the new breakwater is 1.8 km long.",
     "800 metres", "The breakwater on the map measures about 18 km."),
    ("news-01", "news", "meta-data",
     "Who wrote the article?", "Priya Raman", "By Priya Raman, Transport Correspondent",
     "Priya Raman", "The article was written by transport correspondent Priya Raman.",
     "Dana Whitfield", "It was written by the newspaper's editorial board."),
    ("news-02", "news", "meta-data",
     "On what date was the article published?", "6 November 2024",
     "Published 6 November 2024, 07:45",
     "November 6, 2024", "The article was published on 6 Nov 2024.",
     "5 November 2024", "It was published on 2024-11-16."),
    ("news-02", "news", "unanswerable",
     "How much did the winning campaign spend on advertising?", "Not mentioned", "",
     "The article doesn't say.",
     "The article does not give any figures for campaign advertising spending.",
     "$2.1 million", "The winning campaign spent roughly $3 million on television advertising."),
)

# Chance of a right answer, and how question types shift it.
P_RIGHT = {"sim-careful": 0.78, "sim-terse": 0.62, "sim-verbose": 0.68}
TYPE_SHIFT = {"text-only": 0.05, "multimodal": -0.2, "meta-data": 0.05, "unanswerable": 0.0}
P_EMPTY_TERSE = 0.06


def _record(q: tuple[str, ...], system: str, answer: str | None,
            confidence: float | None, human: int | None) -> dict[str, object]:
    doc_id, domain, qtype, question, reference, evidence = q[:6]
    return {"doc_id": doc_id, "question": question, "reference": reference, "answer": answer,
            "domain": domain, "qtype": qtype, "evidence": evidence or None,
            "confidence": confidence, "system": system, "human": human}


def build(seed: int = SEED) -> bytes:
    """The sample file's bytes."""
    rng = random.Random(seed)
    records = []
    for system in ("sim-careful", "sim-terse", "sim-verbose"):
        for q in QUESTIONS:
            qtype = q[2]
            p = P_RIGHT[system] + TYPE_SHIFT[qtype]
            if system == "sim-verbose" and qtype == "unanswerable":
                p -= 0.4  # a fluent system that invents what the document does not say
            right = rng.random() < p
            if system == "sim-careful":
                verbose = rng.random() < 0.5
            else:
                verbose = system == "sim-verbose"
            answer: str | None = q[6 + (0 if right else 2) + (1 if verbose else 0)]
            confidence = human = None
            if system == "sim-careful":
                # informative but imperfect: right answers centre on 0.80, wrong on 0.55,
                # figures and tables a little lower, with overlap
                centre = (0.80 if right else 0.55) - (0.08 if qtype == "multimodal" else 0.0)
                confidence = round(min(0.99, max(0.05, centre + 0.4 * (rng.random() - 0.5))), 2)
                human = int(right)
            elif system == "sim-terse" and rng.random() < P_EMPTY_TERSE:
                answer = None
            records.append(_record(q, system, answer, confidence, human))
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    return ("\n".join(lines) + "\n").encode("utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the file instead of writing it")
    args = parser.parse_args(argv)
    data = build()
    if args.check:
        same = OUT.is_file() and OUT.read_bytes() == data
        print(f"{OUT}: {'up to date' if same else 'DIFFERS from the generator'}")
        return 0 if same else 1
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(data)
    print(f"wrote {len(data.splitlines())} records to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
