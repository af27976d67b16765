"""profsum_query_json(trace, question [, top_k]) against
summary-v1-tools-spec.md §2 (query_profile_summary): the examples of §2, the
F3/F7 fixture queries of summary-v1-spec.md §7, and a Python rendering of §2
run on the same documents for many questions (including Unicode ones, which
exercise Python's str.lower/strip and re's \\b, \\w, \\s, \\d)."""
import json
import random
import re
import unittest

import fixtures
from util import DbTestCase


# ---------------------------------------------------------------------------
# §2 in Python (the reference semantics, newest version as the spec states).
# ---------------------------------------------------------------------------
STRIP = "`\"'?.!, "


def _normalize_target(target):
    if target is None:
        return None
    t = target.strip().strip(STRIP)
    t = re.sub(r"^(op|operation)\s+", "", t, flags=re.IGNORECASE)
    return t or None


def _after(question, kw):
    m = re.search(r"\b%s\b" % re.escape(kw), question, flags=re.IGNORECASE)
    if m is None:
        return None
    return _normalize_target(question[m.end():].strip().strip(STRIP))


def _op_like(question):
    m = re.search(r"\b[A-Za-z_][A-Za-z0-9_]*\.\d+\b", question)
    return _normalize_target(m.group(0)) if m else None


def _gap(g):
    out = {k: g.get(k) for k in ("name", "count", "total_gap_duration", "max_gap_duration", "avg_gap_duration")}
    out["payload_op"] = g.get("payload_op") or g.get("name")
    out["marker_op"] = g.get("marker_op") or g.get("name")
    return out


def _find_gap(gaps, target):
    t = target.lower()
    cands = [(g, {c.lower() for c in (_gap(g)["name"], _gap(g)["payload_op"], _gap(g)["marker_op"])}) for g in gaps]
    for g, c in cands:
        if t in c:
            return _gap(g)
    for g, c in cands:
        if any(t in x for x in c):
            return _gap(g)
    return None


CTX_KEYS = ("op_name", "region_path", "count", "total_gap_duration", "avg_gap_duration")


def _contexts(doc, target, top_k):
    ctxs = doc.get("gap_region_contexts") or []
    if not ctxs:
        return []
    pick = [{k: c.get(k) for k in CTX_KEYS} for c in ctxs]
    if target is None:
        return pick[:top_k]
    t = _normalize_target(target)
    if t is None:
        return pick[:top_k]
    t = t.lower()
    exact = [c for c in pick if c["op_name"].lower() == t]
    if exact:
        return exact[:top_k]
    return [c for c in pick if t in c["op_name"].lower()][:top_k]


HOT_KEYS = ("name", "canonical_name", "category", "count", "exclusive_duration", "total_duration",
            "avg_duration", "shape_signature", "source_file", "tf_op_path", "flop_proxy_per_invocation")
COMM_KEYS = ("collective", "count", "total_duration", "avg_duration")
CAND_KEYS = ("candidate_id", "title", "rationale", "evidence", "suggestions")


def ref_query(doc, question, top_k=10):
    q = question.lower().strip()
    comm = [{k: c.get(k) for k in COMM_KEYS} for c in doc["communication_ops"]]
    gaps = doc["gap_before_ops"]
    if "top" in q and "op" in q:
        return {"query_type": "top_ops", "results": [{k: h.get(k) for k in HOT_KEYS} for h in doc["hot_ops"][:top_k]]}
    if any(t in q for t in ("comm", "collective")) and any(t in q for t in ("compute", "dominating", "dominant", "worst")):
        cs = doc["time_breakdown"]["compute"]["share_of_total"]
        ms = doc["time_breakdown"]["communication"]["share_of_total"]
        return {"query_type": "compute_vs_communication", "dominant": "communication" if ms > cs else "compute",
                "compute_share": cs, "communication_share": ms, "communication_breakdown": comm[:top_k]}
    if "collective" in q or "communication" in q:
        return {"query_type": "collective_breakdown", "results": comm[:top_k]}
    if "gap" in q and "before" in q:
        target = _after(question, "before")
        top = [_gap(g) for g in gaps[:top_k]]
        if target:
            return {"query_type": "pre_op_gap", "target": target, "match": _find_gap(gaps, target),
                    "context": _contexts(doc, target, top_k), "top_gaps": top}
        return {"query_type": "pre_op_gap", "top_gaps": top}
    if "context" in q and ("gap" in q or "op" in q or "copy" in q):
        target = _after(question, "for")
        if target is None:
            target = _after(question, "of")
        if target is None:
            target = _after(question, "op")
        if target is None:
            target = _op_like(question)
        return {"query_type": "gap_region_context", "target": target, "results": _contexts(doc, target, top_k)}
    if "region" in q or "hierarch" in q:
        regions = doc["hierarchical_regions"]
        roots = {r["path"]: max(0, r["inclusive_duration"]) for r in regions if r["depth"] == 1}
        fallback = max(roots.values()) if roots else 0
        out = []
        for r in regions[:top_k]:
            total = roots.get(r["path"].split("=>")[0], fallback)
            out.append({k: r[k] for k in ("path", "depth", "count", "inclusive_duration", "exclusive_duration")})
            out[-1]["inclusive_share_of_total"] = r["inclusive_duration"] / total if total > 0 else 0.0
            out[-1]["exclusive_share_of_total"] = r["exclusive_duration"] / total if total > 0 else 0.0
        return {"query_type": "hierarchical_regions", "results": out}
    if "memory-bound" in q or "compute-bound" in q:
        return {"query_type": "bound_analysis", "result": "unsupported_from_trace_only",
                "details": "The current summary is derived from trace timings and does not include "
                           "hardware-counter evidence needed for memory-vs-compute bound classification."}
    if "improve" in q or "regress" in q or "compare" in q:
        return {"query_type": "comparison_hint",
                "details": "Use compare_profile_summaries(before, after) to measure regressions/improvements."}
    return {"query_type": "optimization_candidates",
            "results": [{k: c.get(k) for k in CAND_KEYS} for c in doc["optimization_candidates"]]}


def dumps(obj):
    return json.dumps(obj, indent=2, sort_keys=True)


F3_OP = "_linear_softmax_cross_entropy_loss_bwd_pallas_mosaic_tpu_combined.1"
F3_PATH = "_train_step=>apply_rotary_embedding=>linear_softmax_cross_entropy_loss_bwd"

# The examples of §2 and the recipe, plus intent-order and extraction edge cases.
QUESTIONS = [
    "What are the top 3 ops by exclusive time?",
    "Is comm or compute dominating? Which collective is worst?",
    "Which collective dominates?",
    "show the communication breakdown",
    "what is the gap before %s?" % F3_OP,
    "what is the gap before iota.296?",
    "What is the gap BEFORE `copy.1`?!",
    "gap before",
    "gap before op dot.1",
    "gap before operation   dot.1 ...",
    "gap before op op dot.1",
    "gap before .?!",
    "gaps beforehand dot.1",
    "gap before all-reduce",
    "show hierarchical regions",
    "show regions",
    "show context for op copy.1",
    "copy.1 is noisy; can you contextualize that in hierarchical annotation?",
    "context of the gap",
    "context of",
    "what is the context op copy.564",
    "context for copy.564 and copy.1",
    "copy context",
    "is this memory-bound or compute-bound?",
    "did it improve?",
    "What should we try next?",
    "stop the presses",          # "stop" contains both "top" and "op": top_ops
    "  WHAT SHOULD WE TRY NEXT  ",
    "",
]


class QueryBase(DbTestCase):
    def imp(self, trace, label, opts=None):
        p = self.td.write(label + ".json", trace)
        self.db.execute("SELECT profsum_import(?, ?, ?)", (p, label, json.dumps(opts or {})))
        return json.loads(self.db.execute("SELECT profsum_summary_json(?)", (label,)).fetchone()[0])

    def q(self, label, question, top_k=None):
        if top_k is None:
            text = self.db.execute("SELECT profsum_query_json(?, ?)", (label, question)).fetchone()[0]
        else:
            text = self.db.execute("SELECT profsum_query_json(?, ?, ?)", (label, question, top_k)).fetchone()[0]
        self.assertEqual(text, dumps(json.loads(text)))      # sorted keys, indent 2
        return json.loads(text)


class Fixtures(QueryBase):
    def test_f3_gap_before(self):
        self.imp(fixtures.f3(), "f3", {"warmup_steps": 0, "hot_op_limit": 20})
        a = self.q("f3", "what is the gap before %s?" % F3_OP)
        self.assertEqual(a["query_type"], "pre_op_gap")
        self.assertEqual(a["target"], F3_OP)
        self.assertEqual(a["match"]["name"], F3_OP)
        self.assertEqual(a["match"]["total_gap_duration"], 50.0)
        self.assertEqual(a["context"][0]["region_path"], F3_PATH)
        self.assertEqual(sorted(a), ["context", "match", "query_type", "target", "top_gaps"])
        self.assertEqual(sorted(a["match"]), ["avg_gap_duration", "count", "marker_op", "max_gap_duration",
                                              "name", "payload_op", "total_gap_duration"])

    def test_f3_regions(self):
        self.imp(fixtures.f3(), "f3", {"warmup_steps": 0, "hot_op_limit": 20})
        a = self.q("f3", "show hierarchical regions")
        self.assertEqual(a["query_type"], "hierarchical_regions")
        self.assertTrue(a["results"])
        for r in a["results"]:
            self.assertIn("inclusive_share_of_total", r)
            self.assertIn("exclusive_share_of_total", r)
        by = {r["path"]: r for r in a["results"]}
        # shares are relative to the root's inclusive duration
        self.assertEqual(by["train_step"]["inclusive_share_of_total"], 1.0)
        self.assertEqual(by["train_step=>forward=>matmul"]["inclusive_share_of_total"], 50.0 / 60.0)
        self.assertEqual(by[F3_PATH]["exclusive_share_of_total"], 1.0)
        self.assertEqual(by["_train_step"]["exclusive_share_of_total"], 0.0)

    def test_f3_contexts(self):
        self.imp(fixtures.f3(), "f3", {"warmup_steps": 0, "hot_op_limit": 20})
        a = self.q("f3", "show context for op copy.1")
        self.assertEqual(a["query_type"], "gap_region_context")
        self.assertEqual(a["target"], "copy.1")
        self.assertEqual(a["results"], [])
        a = self.q("f3", "copy.1 is noisy; can you contextualize that in hierarchical annotation?")
        self.assertEqual(a["query_type"], "gap_region_context")
        self.assertEqual(a["target"], "copy.1")

    def test_f6_context_rows(self):
        self.imp(fixtures.f6(), "f6", {"warmup_steps": 0})
        a = self.q("f6", "copy.1 is noisy; can you contextualize that in hierarchical annotation?")
        self.assertEqual(a["results"], [{"op_name": "copy.1", "region_path": "copy", "count": 1,
                                         "total_gap_duration": 20.0, "avg_gap_duration": 20.0}])

    def test_f5_context_copy_564(self):
        self.imp(fixtures.f5(), "f5", {"warmup_steps": 0})
        a = self.q("f5", "show context for op copy.564")
        self.assertEqual(a["query_type"], "gap_region_context")
        self.assertEqual(a["target"], "copy.564")
        self.assertEqual(a["results"][0]["region_path"], "copy(model.params.blocks[0].attn.w_k)")

    def test_f7_marker(self):
        self.imp(fixtures.f7(), "f7", {"warmup_steps": 0})
        a = self.q("f7", "what is the gap before iota.296?")
        self.assertEqual(a["query_type"], "pre_op_gap")
        self.assertEqual(a["target"], "iota.296")
        self.assertEqual(a["match"]["name"], "dot.1")
        self.assertEqual(a["match"]["marker_op"], "iota.296")
        self.assertEqual(a["match"]["total_gap_duration"], 90.0)
        # contexts are keyed by payload op: none is named iota.296
        self.assertEqual(a["context"], [])
        a = self.q("f7", "what is the gap before dot.1")
        self.assertEqual(a["context"][0]["op_name"], "dot.1")

    def test_f1_intents(self):
        self.imp(fixtures.f1([100, 110, 120, 130, 140, 150], 60), "f1", {"warmup_steps": 2, "hot_op_limit": 10})
        a = self.q("f1", "What are the top 3 ops by exclusive time?", 3)
        self.assertEqual(a["query_type"], "top_ops")
        self.assertEqual([r["name"] for r in a["results"]], ["fusion.1", "softmax", "all-reduce.1"])
        self.assertEqual(sorted(a["results"][0]), sorted(HOT_KEYS))
        a = self.q("f1", "Is comm or compute dominating? Which collective is worst?")
        self.assertEqual(a["query_type"], "compute_vs_communication")
        self.assertEqual(a["dominant"], "compute")
        self.assertEqual(a["compute_share"], 0.3870967741935484)
        self.assertEqual(a["communication_share"], 0.1935483870967742)
        self.assertEqual(a["communication_breakdown"], [{"collective": "all-reduce", "count": 2,
                                                         "total_duration": 60.0, "avg_duration": 30.0}])
        a = self.q("f1", "gap before")
        self.assertEqual(sorted(a), ["query_type", "top_gaps"])
        self.assertEqual([g["name"] for g in a["top_gaps"]], ["softmax", "dependency-wait", "psum.1"])
        a = self.q("f1", "What should we try next?")
        self.assertEqual(a["query_type"], "optimization_candidates")
        self.assertEqual([c["candidate_id"] for c in a["results"]],
                         ["communication-heavy", "single-hot-op", "pre-op-gap"])
        # all candidates, whatever top_k
        self.assertEqual(len(self.q("f1", "What should we try next?", 1)["results"]), 3)
        self.assertEqual(self.q("f1", "Is it memory-bound?")["result"], "unsupported_from_trace_only")
        self.assertEqual(self.q("f1", "did it regress?")["query_type"], "comparison_hint")
        self.assertEqual(self.q("f1", "top ops", 0)["results"], [])
        self.assertEqual(len(self.q("f1", "top ops", 2)["results"]), 2)
        # "stop" contains "top" and "op": intent 1
        self.assertEqual(self.q("f1", "stop")["query_type"], "top_ops")


class AgainstPython(QueryBase):
    """Every answer equals the Python rendering of §2 on the same document."""

    def check(self, label, doc, questions, top_ks=(None, 0, 1, 3)):
        for question in questions:
            for k in top_ks:
                got = self.q(label, question, k)
                want = ref_query(doc, question, 10 if k is None else k)
                self.assertEqual(got, want, "question %r top_k %r" % (question, k))

    def test_examples_on_fixtures(self):
        docs = {
            "f1": self.imp(fixtures.f1([100, 110, 120, 130, 140, 150], 60), "f1", {"warmup_steps": 2}),
            "f3": self.imp(fixtures.f3(), "f3", {"warmup_steps": 0, "hot_op_limit": 20}),
            "f5": self.imp(fixtures.f5(), "f5", {"warmup_steps": 0}),
            "f6": self.imp(fixtures.f6(), "f6", {"warmup_steps": 0}),
            "f7": self.imp(fixtures.f7(), "f7", {"warmup_steps": 0}),
            "f8": self.imp(fixtures.f8(), "f8", {"warmup_steps": 0}),
            "f9": self.imp(fixtures.f9(), "f9", {"warmup_steps": 1, "hot_op_limit": 10}),
        }
        for label, doc in docs.items():
            self.check(label, doc, QUESTIONS)

    def test_random_questions(self):
        """Random mixes of keywords, op names, punctuation and Unicode."""
        doc = self.imp(fixtures.f7(), "f7", {"warmup_steps": 0})
        rnd = random.Random(7)
        words = ["gap", "before", "BEFORE", "Before", "for", "of", "op", "OP", "operation", "Operation",
                 "context", "copy", "copy.1", "dot.1", "DOT.1", "iota.296", "fusion.0", "top", "region",
                 "iota", "dot", "x.", ".1", "_a.12", "a.b.1"]
        glue = [" ", "  ", "\t", "?", ".", "!", ",", "`", "'", '"', "-", "_", "/", "\u00a0", "\u2003",
                "\u3000", "\u0301", "\u00e9", "\u0130", "\u0131", "\u212a", "\u0661", "\u00b2", "\u00ab",
                "\u2014", "\U0001F600", "\u03a3", "\u0416", "\u00c9"]
        qs = []
        for _ in range(400):
            parts = []
            for _ in range(rnd.randint(1, 7)):
                parts.append(rnd.choice(words))
                parts.append("".join(rnd.choice(glue) for _ in range(rnd.randint(0, 2))))
            qs.append("".join(parts))
        self.check("f7", doc, qs, top_ks=(None, 2))

    def test_unicode_word_boundaries(self):
        """Python's \\w is Unicode-wide: a letter before the keyword hides it."""
        doc = self.imp(fixtures.f7(), "f7", {"warmup_steps": 0})
        for ch in ["\u00e9", "\u0416", "\u4e2d", "\u0661", "\u00b2", "\u0301", "\u00a0", "\u2014",
                   "\u00ab", "\U0001F600", "\u0130", "\u00aa", "\u02c6", "\u0e31"]:
            qs = ["gap %sbefore dot.1" % ch, "gap before%s dot.1" % ch,
                  "context for%s copy.1" % ch, "context %sfor copy.1" % ch,
                  "context %scopy.1" % ch, "context copy.1%s" % ch, "context copy.1%s2" % ch,
                  "gap before operat%son dot.1" % ch, "gap before op%sdot.1" % ch]
            self.check("f7", doc, qs, top_ks=(None,))

    def test_case_folding_of_targets(self):
        """Targets are matched after Python str.lower() (Unicode-wide)."""
        doc = self.imp(fixtures.ops_only([
            {"name": "fusion.0", "ts": 0, "dur": 10},
            {"name": "\u00c9CRIRE.1", "ts": 100, "dur": 5},
            {"name": "\u0394ELTA.2", "ts": 200, "dur": 5},
            {"name": "\u0130stanbul.3", "ts": 300, "dur": 5}]), "u", {"warmup_steps": 0})
        qs = ["gap before \u00e9crire.1", "gap before \u00c9CRIRE.1", "gap before \u03b4elta.2",
              "gap before i\u0307stanbul.3", "gap before \u0130STANBUL.3", "gap before istanbul.3",
              "context for \u00e9crire.1", "context for \u03b4ELTA", "context for i\u0307stanbul"]
        self.check("u", doc, qs, top_ks=(None,))

    def test_final_sigma(self):
        """Python's str.lower() makes a capital sigma final (U+03C2) after a
        cased letter and before none (Case_Ignorable ones, such as ' and a
        combining accent, passed over both ways): targets typed in capitals
        find the op names written with it, and not the others."""
        names = ["\u03c3\u03b1\u03c2.1", "\u03c3\u03b1\u03c3.2", "\u03c3.3", "a\u03c2'b.4",
                 "a'\u03c2.5", "x\u0301\u03c2.6", "\u03c2\u03c2.7", "ab\u03c3c.8"]
        doc = self.imp(fixtures.ops_only([{"name": n, "ts": 100 * i, "dur": 5} for i, n in enumerate(names)]),
                       "s", {"warmup_steps": 0})
        qs = []
        for caps in ["\u03a3\u0391\u03a3.1", "\u03a3\u0391\u03a3.2", "\u03a3.3", "A\u03a3'B.4", "A'\u03a3.5",
                     "X\u0301\u03a3.6", "\u03a3\u03a3.7", "AB\u03a3C.8", "\u03a3\u03a3", "A\u03a3", "\u03a3A"]:
            qs += ["gap before %s" % caps, "context for %s" % caps, "gap before op %s?" % caps]
        self.check("s", doc, qs, top_ks=(None,))
        rnd = random.Random(11)
        alphabet = ["\u03a3", "\u03c3", "\u03c2", "A", "a", "'", "\u0301", ".", " ", "\u0386", "\u00b7",
                    "1", "\u02b0", "\u00ad", "\U0001d400", "\u2160"]
        self.check("s", doc, ["gap before " + "".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 6)))
                              for _ in range(300)], top_ks=(None,))
        # the rule is Python's: a sample of its outcomes, not only agreement
        self.assertEqual("A\u03a3".lower(), "a\u03c2")
        self.assertEqual(self.q("s", "gap before A'\u03a3.5", None)["match"]["name"], "a'\u03c2.5")
        self.assertIsNone(self.q("s", "gap before \u03a3\u0391\u03a3.2", None)["match"])   # not \u03c3\u03b1\u03c3.2


class FromV1File(QueryBase):
    def test_v1_file_with_legacy_fields(self):
        """A v1 file imported from elsewhere: gaps without payload/marker (era A)
        and hot ops without canonical_name are read leniently."""
        doc = self.imp(fixtures.f7(), "f7", {"warmup_steps": 0})
        for g in doc["gap_before_ops"]:
            del g["payload_op"]
            del g["marker_op"]
        for h in doc["hot_ops"]:
            h["canonical_name"] = ""
            h["work_proxy_per_invocation"] = h.pop("flop_proxy_per_invocation")
        p = self.td.write("old.summary.json", json.dumps(doc))
        self.db.execute("SELECT profsum_import(?, 'old')", (p,))
        a = self.q("old", "what is the gap before dot.1?")
        self.assertEqual(a["match"]["payload_op"], "dot.1")
        self.assertEqual(a["match"]["marker_op"], "dot.1")
        a = self.q("old", "top ops")
        self.assertEqual([r["canonical_name"] for r in a["results"]], ["dot", "fusion", "iota"])
        self.assertIn("flop_proxy_per_invocation", a["results"][0])


class Errors(QueryBase):
    def test_errors(self):
        self.imp(fixtures.f7(), "f7", {"warmup_steps": 0})
        cases = [("SELECT profsum_query_json('f7', 'top ops', 1.5)", "top_k must be an integer"),
                 ("SELECT profsum_query_json('f7', 'top ops', 'x')", "top_k must be an integer"),
                 ("SELECT profsum_query_json('f7', NULL)", "the question must be text"),
                 ("SELECT profsum_query_json('f7', 42)", "the question must be text"),
                 ("SELECT profsum_query_json('f7', x'746f70206f7073')", "the question must be text"),
                 ("SELECT profsum_query_json('nope', 'top ops')", "no trace with label 'nope'"),
                 ("SELECT profsum_query_json(99, 'top ops')", "no trace with id 99")]
        for sql, msg in cases:
            with self.assertRaises(Exception) as cm:
                self.db.execute(sql).fetchone()
            self.assertIn("profsum_query_json: " + msg, str(cm.exception), sql)

    def test_by_id_and_null_top_k(self):
        self.imp(fixtures.f7(), "f7", {"warmup_steps": 0})
        tid = self.db.execute("SELECT trace_id FROM profsum_trace WHERE label='f7'").fetchone()[0]
        a = json.loads(self.db.execute("SELECT profsum_query_json(?, 'top ops', NULL)", (tid,)).fetchone()[0])
        self.assertEqual(len(a["results"]), 3)

    def test_no_trace_imported(self):
        with self.assertRaises(Exception) as cm:
            self.db.execute("SELECT profsum_query_json('x', 'top ops')").fetchone()
        self.assertIn("profsum_query_json: no trace with label 'x'", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
