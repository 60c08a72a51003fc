"""Hand-made corpora for the tests: :data:`TINY`, a corpus written by hand so that every
statistic can be counted by hand (all its words are their own lemma and hold only letters,
sentences end with ``.`` followed by a capitalised word, and paragraphs are lines), the writers of
data-set records (folders, zips) and the shipped example written as two terms."""

from __future__ import annotations

import copy
import json
import shutil
import zipfile
from pathlib import Path

#: term key -> {"cases": {case id: (header line, {opinion id: [lines]})},
#:              "sentences": [(sentence id, opinion id, line index, text, label)]}
#: Case text = header + "\n" + the opinion texts joined by "\n"; opinion text = its lines joined
#: by "\n"; a paragraph is the line that holds a labelled sentence.
TINY = {
    "red_car": {
        "cases": {
            "c1": (
                "Header green city",
                {
                    "c1-o1": [
                        "The red car near the road.",  # A
                        "A dog in the park. The blue car in the city.",  # B C
                        "A red bird in a tree. The red car and the red car.",  # D E
                    ],
                    "c1-o2": [
                        "The old dog near the tree.",  # F
                        "A red car.",  # G
                    ],
                },
            ),
            "c2": (
                "Header small road",
                {
                    "c2-o1": [
                        "The small car in the park. A big tree.",  # H I
                        "The bird near the road. A dog near a tree.",  # J K
                        "The old tree in the city.",  # L
                    ],
                },
            ),
        },
        "sentences": [
            ("s1", "c1-o1", 0, "The red car near the road.", "high value"),  # A
            ("s2", "c1-o1", 1, "The blue car in the city.", "no value"),  # C
            ("s3", "c1-o1", 2, "The red car and the red car.", "certain value"),  # E
            ("s4", "c1-o2", 1, "A red car.", "potential value"),  # G
            ("s5", "c2-o1", 0, "The small car in the park.", None),  # H, unlabelled
        ],
    }
}

#: TINY's term as a query: the query its candidates are scored against.
TINY_QUERY = ["red", "car"]

#: The spaCy sentences of each opinion of TINY, in order (for neighbours and hand counts).
TINY_OPINION_SENTENCES = {
    "c1-o1": ["The red car near the road.", "A dog in the park.", "The blue car in the city.",
              "A red bird in a tree.", "The red car and the red car."],
    "c1-o2": ["The old dog near the tree.", "A red car."],
    "c2-o1": ["The small car in the park.", "A big tree.", "The bird near the road.", "A dog near a tree.",
              "The old tree in the city."],
}


def build_records(spec: dict) -> dict[str, dict[str, dict]]:
    """``{term key: {kind: {id: record}}}`` in the data-set format, from a compact spec."""
    out: dict[str, dict[str, dict]] = {}
    for key, term in spec.items():
        cases, opinions, paragraphs, sentences = {}, {}, {}, {}
        lines_of, case_of = {}, {}
        for cid, (header, ops) in term["cases"].items():
            texts = []
            for pos, (oid, lines) in enumerate(ops.items(), start=1):
                text = "\n".join(lines)
                opinions[oid] = {"case_id": cid, "author": "JUDGE, J.", "type": "majority", "position": pos,
                                 "text": text}
                lines_of[oid], case_of[oid] = lines, cid
                texts.append(text)
            cases[cid] = {"original_id": 1, "name": f"Case {cid}", "short_name": f"Case {cid}",
                          "date": "2001-01-01", "official_citation": f"1 Tiny {cid}", "court": "Tiny Ct.",
                          "jurisdiction": "Tiny", "attorneys": [], "parties": [], "judges": [],
                          "text": "\n".join([header, *texts])}
        for sid, oid, line_no, text, label in term["sentences"]:
            line = lines_of[oid][line_no]
            assert text in line, (text, line)
            pid = f"{oid}-p{line_no}"
            paragraphs.setdefault(pid, {"case_id": case_of[oid], "opinion_id": oid, "position": line_no,
                                        "text": line})
            rec = {"case_id": case_of[oid], "opinion_id": oid, "paragraph_id": pid, "position": 0, "text": text}
            if label is not None:
                rec["label"] = label
            sentences[sid] = rec
        out[key] = {"case": cases, "opinion": opinions, "paragraph": paragraphs, "sentence": sentences}
    return out


def write_records(folder: Path, records: dict[str, dict[str, object]]) -> Path:
    """Write ``KEY-KIND.json`` files; a ``str`` value is written as it is (for malformed JSON)."""
    folder.mkdir(parents=True, exist_ok=True)
    for key, kinds in records.items():
        for kind, data in kinds.items():
            text = data if isinstance(data, str) else json.dumps(data, indent=1)
            (folder / f"{key}-{kind}.json").write_text(text, encoding="utf-8")
    return folder


def zip_records(path: Path, key: str, kinds: dict[str, object]) -> Path:
    """One term zip holding ``KEY-KIND.json`` members."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for kind, data in kinds.items():
            zf.writestr(f"{key}-{kind}.json", data if isinstance(data, str) else json.dumps(data))
    return path


class CorpusBuilder:
    """Writes hand-made corpora into a test's ``tmp_path``."""

    def __init__(self, root: Path):
        self.root = root

    @staticmethod
    def records(spec: dict | None = None) -> dict[str, dict[str, dict]]:
        return build_records(copy.deepcopy(spec if spec is not None else TINY))

    def write(self, records: dict | None = None, name: str = "data") -> Path:
        return write_records(self.root / name, records if records is not None else self.records())

    @staticmethod
    def zip_term(path: Path, key: str, kinds: dict[str, object]) -> Path:
        return zip_records(path, key, kinds)

    def zip(self, records: dict | None = None, name: str = "zips") -> Path:
        """A folder with one zip per term; returns the folder."""
        records = records if records is not None else self.records()
        folder = self.root / name
        for key, kinds in records.items():
            zip_records(folder / f"{key}.zip", key, kinds)
        return folder


def example_as_two_terms(folder: Path) -> Path:
    """The shipped example term written twice into ``folder`` (``vehicle`` and ``motor_vehicle``):
    the smallest data on which leave-one-term-out has a fold."""
    from statinterp.workflow import example_data_path

    folder.mkdir(parents=True, exist_ok=True)
    for kind in ("case", "opinion", "paragraph", "sentence"):
        src = example_data_path() / f"vehicle-{kind}.json"
        shutil.copy(src, folder / f"vehicle-{kind}.json")
        shutil.copy(src, folder / f"motor_vehicle-{kind}.json")
    return folder
