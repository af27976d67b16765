"""Tests of the pure SQL functions of ext/sql/funcs_sql.c (rules in ext/summary/oprules.c).

Expected values come from docs/spec/summary.md (the section
is named in each test) and from the reference tool's rules applied by hand.
Run: /usr/bin/python3 tests/run.py test_funcs.py
"""
import os
import re
import sqlite3
import unittest

from util import connect

FRAME = ("OVER (PARTITION BY pid, tid ORDER BY idx ROWS BETWEEN "
         "UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)")
FRAME_ERR = "exclusive_time: requires the frame " + FRAME
EXCL = "exclusive_time(ts, dur) " + FRAME

SQLITE_DETERMINISTIC = 0x800
SQLITE_INNOCUOUS = 0x200000


class FuncTestCase(unittest.TestCase):
    def setUp(self):
        self.db = connect()

    def tearDown(self):
        self.db.close()

    def one(self, sql, *args):
        """First column of the first row."""
        return self.db.execute(sql, args).fetchone()[0]

    def f(self, func, *args):
        """Call SQL function FUNC with ARGS bound as parameters."""
        marks = ", ".join("?" for _ in args)
        return self.one("SELECT %s(%s)" % (func, marks), *args)

    def assertSqlError(self, sql, message, *args):
        with self.assertRaises(sqlite3.OperationalError) as cm:
            self.db.execute(sql, args).fetchall()
        self.assertEqual(str(cm.exception), message)


class RegistrationTest(FuncTestCase):
    EXPECTED = [
        ("classify_op", 1, "s"), ("classify_op", 2, "s"), ("classify_op", 3, "s"),
        ("exclusive_time", 2, "w"),
        ("profsum_canonical_op", 1, "s"), ("profsum_collective", 1, "s"),
        ("profsum_flop_proxy", 2, "s"), ("profsum_format_near", 3, "s"),
        ("profsum_semantic_family", 1, "s"), ("profsum_semantic_family", 2, "s"),
        ("profsum_shape_signature", 1, "s"),
        ("tf_region", 1, "s"), ("tf_region", 2, "s"),
    ]

    def test_inventory_and_flags(self):
        names = sorted({n for n, _, _ in self.EXPECTED})
        rows = self.db.execute(
            "SELECT name, narg, type, flags FROM pragma_function_list "
            "WHERE name IN (%s) ORDER BY name, narg" % ",".join("?" * len(names)),
            names).fetchall()
        self.assertEqual([(n, a, t) for n, a, t, _ in rows], self.EXPECTED)
        for name, narg, _, flags in rows:
            with self.subTest(name=name, narg=narg):
                self.assertTrue(flags & SQLITE_DETERMINISTIC)
                self.assertTrue(flags & SQLITE_INNOCUOUS)

    def test_usable_in_a_view_and_an_index(self):
        # DETERMINISTIC allows expression indexes; INNOCUOUS allows schema use.
        self.db.execute("CREATE TABLE ev(name TEXT, tf_op TEXT)")
        self.db.execute("CREATE INDEX ev_cat ON ev(classify_op(name))")
        self.db.execute("CREATE VIEW v AS SELECT profsum_canonical_op(name) AS c, "
                        "tf_region(tf_op) AS r FROM ev")
        self.db.execute("INSERT INTO ev VALUES ('copy.564', 'jit(f)/g')")
        self.assertEqual(self.db.execute("SELECT c, r FROM v").fetchall(),
                         [("copy", "f=>g")])


class NullArgumentsTest(FuncTestCase):
    """NULL arguments as docs/functions.md says: NULL in a first argument
    gives NULL; NULL context (a process or thread name, a tf_op path)
    is the call without it.  Every `SQL` → `result` of the page's section
    holds, and these cases are among them."""

    CASES = [
        ("classify_op('fusion.1')", "compute"),
        ("classify_op('fusion.1', NULL)", "other"),
        ("classify_op('all-reduce.1', NULL)", "communication"),
        ("classify_op('wait.3', NULL)", "stall"),
        ("classify_op('fusion.1', '/device:TPU:0', NULL)", "compute"),
        ("classify_op('fusion.1', NULL, NULL)", "other"),
        ("classify_op('fusion.1', NULL, 'Steps')", None),
        ("profsum_semantic_family('add', NULL)", "other"),
        ("profsum_semantic_family('copy.1', NULL)", "copy"),
        ("tf_region('a/b', NULL)", None),
        ("profsum_flop_proxy('other', NULL)", None),
    ]

    def section(self):
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "functions.md")
        text = open(path, encoding="utf-8").read()
        start = text.index("## NULL arguments")
        return text[start:text.index("Fidelity to the reference", start)]

    def test_documented_examples(self):
        text = re.sub(r"\s+", " ", self.section())
        pairs = re.findall(r"`([a-z_]+\((?:[^`]*)\))` → `([^`]*)`", text)
        got = {sql: (None if want == "NULL" else want) for sql, want in pairs}
        self.assertEqual(got, dict(self.CASES))
        for sql, want in self.CASES:
            with self.subTest(sql=sql):
                self.assertEqual(self.one("SELECT " + sql), want)

    def test_null_first_argument(self):
        for sql in ("classify_op(NULL)", "classify_op(NULL, '/device:TPU:0')", "tf_region(NULL)",
                    "profsum_canonical_op(NULL)", "profsum_collective(NULL)",
                    "profsum_semantic_family(NULL, 'a/b')", "profsum_shape_signature(NULL)",
                    "profsum_flop_proxy(NULL, '8,8')", "profsum_format_near(NULL, 1, 5)",
                    "profsum_json_pretty(NULL)"):
            with self.subTest(sql=sql):
                self.assertIsNone(self.one("SELECT " + sql))

    def test_null_is_the_call_without_it(self):
        for name in ("fusion.1", "all-reduce.1", "wait.3", "copy.1", "adam_update"):
            with self.subTest(name=name):
                self.assertEqual(self.f("classify_op", name, None), self.f("classify_op", name, None, None))
                self.assertEqual(self.f("profsum_semantic_family", name, None),
                                 self.f("profsum_semantic_family", name))


class ClassifyOpTest(FuncTestCase):
    def test_op_category(self):  # §1.4 op category
        cases = {
            "fusion.1": "compute", "softmax": "compute",
            "all-reduce.1": "communication", "psum.1": "communication",
            "dependency-wait": "stall", "threading wait": "stall",
            "ncclDevKernel_AllGather_RING_LL": "communication",
            "collective-permute-done": "communication",
            # Stall wins over communication.
            "all-reduce-wait": "stall",
            # Underscore spellings are not communication names.
            "all_reduce": "compute", "reduce_scatter": "compute",
            # Pure substrings: "godsend" contains "send".  (The spec's own
            # example "descend" does not contain "send": d-e-s-c-e-n-d.)
            "godsend": "communication", "descend": "compute",
            "resend_buffer": "communication",
            # The stall regex is case-insensitive, with Python's extra
            # IGNORECASE letters (U+0130 matches i, U+212A matches k).
            "BARRIER.3": "stall", "Donation Holds": "stall",
            "WA\u0130T": "stall", "BLOC\u212aED": "stall",
            "": "compute",
        }
        for name, category in cases.items():
            with self.subTest(name=name):
                self.assertEqual(self.f("classify_op", name), category)

    def test_event_category(self):  # §1.4 event category
        cases = [
            ("fusion.1", "/device:TPU:0", "compute"),
            ("custom-call.2", "/device:GPU:0", "compute"),
            ("python_host_compute", "/host:CPU", "host"),
            ("threading wait", "/host:CPU", "stall"),
            ("all-reduce.1", "/host:CPU", "host"),       # host before comm
            ("psum.1", None, "communication"),           # no device needed
            ("psum.1", "/something-else", "communication"),
            ("fusion.1", None, "other"),
            ("fusion.1", "/something-else", "other"),
            ("fusion.1", "/DEVICE:TPU:0", "other"),      # case-sensitive
            ("dependency-wait", None, "stall"),
            ("train", "/host:", "host"),
        ]
        for name, process, category in cases:
            with self.subTest(name=name, process=process):
                self.assertEqual(self.f("classify_op", name, process), category)

    def test_steps_thread(self):
        self.assertIsNone(self.f("classify_op", "0", "/device:TPU:0", "Steps"))
        self.assertEqual(self.f("classify_op", "0", "/device:TPU:0", "XLA Ops"),
                         "compute")
        self.assertEqual(self.f("classify_op", "0", "/device:TPU:0", "steps"),
                         "compute")
        self.assertEqual(self.f("classify_op", "0", "/device:TPU:0", None),
                         "compute")

    def test_null_name(self):
        self.assertIsNone(self.f("classify_op", None))
        self.assertIsNone(self.f("classify_op", None, "/host:CPU"))
        self.assertIsNone(self.f("classify_op", None, "/host:CPU", "main"))


class CanonicalOpTest(FuncTestCase):
    def test_spec_examples(self):  # §1.4
        cases = {
            "%fusion.12": "fusion", "copy.564": "copy",
            "fusion.3.remat": "fusion.3.remat", "all-reduce.1": "all-reduce",
        }
        for name, canonical in cases.items():
            with self.subTest(name=name):
                self.assertEqual(self.f("profsum_canonical_op", name), canonical)

    def test_rules(self):
        cases = {
            "  %%fusion.12\t": "fusion",       # trim, then every leading %
            "a.1.2": "a.1",                    # one suffix only
            "x.": "x.", ".5": "", "%": "", "fusion": "fusion",
            "% fusion.1": " fusion",           # whitespace after % stays
            "\u00a0copy.7\u3000": "copy",      # Python str.strip() spaces
            "fusion.\u0661\u0662": "fusion",   # \d is any Unicode digit
            "fusion.1a": "fusion.1a",
        }
        for name, canonical in cases.items():
            with self.subTest(name=name):
                self.assertEqual(self.f("profsum_canonical_op", name), canonical)
        self.assertIsNone(self.f("profsum_canonical_op", None))
        self.assertEqual(self.f("profsum_canonical_op", 12), "12")


class CollectiveTest(FuncTestCase):
    def test_collectives(self):  # §4.7
        cases = {
            "ncclDevKernel_AllGather_RING_LL": "all-gather",
            "ncclDevKernel_ReduceScatter_RING_LL": "reduce-scatter",
            "psum.1": "all-reduce", "all-reduce.1": "all-reduce",
            "all-reduce-wait": "all-reduce", "ncclAllReduce": "all-reduce",
            "all-gather-start.2": "all-gather", "all_gather": "all-gather",
            "reduce-scatter.5": "reduce-scatter",
            "all-to-all.3": "all-to-all", "AllToAll": "all-to-all",
            "collective-permute.2": "collective-permute",
            "async-collective-start": "async-collective",
            "send.1": "send-recv", "recv-done.2": "send-recv",
            "ncclBroadcast": "other-collective",
            "collective-broadcast": "other-collective",
        }
        for name, collective in cases.items():
            with self.subTest(name=name):
                self.assertEqual(self.f("profsum_collective", name), collective)

    def test_not_communication(self):
        for name in ["fusion.1", "all_reduce", "reduce_scatter", "descend", "", None]:
            with self.subTest(name=name):
                self.assertIsNone(self.f("profsum_collective", name))


class SemanticFamilyTest(FuncTestCase):
    def test_f13_extended_list(self):  # §7 F13 (B-variant list, chosen for profsum)
        cases = [
            ("nvjet_sm90_tst_128x160_64x5_2x1_v_bz_NNT",
             "jit(train_step)/optimizer_update/muonh/newton_schulz_grouped_4d/dot_general",
             "optimizer_muon"),
            ("add", "jit(train_step)/apply_updates/add", "optimizer_apply"),
            ("dot_general", "jit(train_step)/Transformer/CausalSelfAttention/"
             "bsd,dn->bsn/dot_general", "attention_dense"),
            ("mul", "jit(train_step)/Block/GatedNorm/mul", "norm_gating"),
        ]
        for name, path, family in cases:
            with self.subTest(name=name):
                self.assertEqual(self.f("profsum_semantic_family", name, path), family)

    def test_f1_families(self):  # §7 F1: fusion.1 -> canonical fusion -> other
        cases = {
            "fusion.1": "other", "softmax": "other", "all-reduce.1": "collective",
            "dependency-wait": "other", "psum.1": "other",
        }
        for name, family in cases.items():
            with self.subTest(name=name):
                self.assertEqual(self.f("profsum_semantic_family", name), family)

    def test_patterns(self):  # §4.6 extended list, in priority order
        cases = {
            "adam all-reduce": "optimizer_adam",         # priority
            "update_second_moment": "optimizer_adam",
            "MoE_layer": "moe", "ragged_dot": "moe",
            "splash_mha_fwd": "attention_splash",
            "fa4_cute_kernel": "attention_flash",
            "flash_attention": "attention_flash",
            "apply_rotary_embedding": "attention_dense",
            "DenseMLP": "dense_mlp", "RMSNorm": "norm_gating",
            "_linear_softmax_cross_entropy_loss_bwd_pallas_mosaic_tpu_combined.1":
                "loss_xent",
            "fusion.1.x": "fusion", "loop fusion.3.x": "fusion",
            "loop_fusion.3": "other",      # canonical loop_fusion: no "fusion."
            "exponential_reduce_fusion.3": "fusion",
            "copy.564": "copy", "copy-start.1": "copy", "a copy": "copy",
            "xcopy.1": "other", "my_copy": "other", "copy_x": "other",
            "convert_element_type": "convert",
            "ncclDevKernel_AllGather_RING_LL": "collective",
            "reducescatter": "collective",
            "custom-call.2": "other",
        }
        for name, family in cases.items():
            with self.subTest(name=name):
                self.assertEqual(self.f("profsum_semantic_family", name), family)

    def test_word_boundary_is_unicode(self):
        # Python's \b: every script's letters, digits and numbers are word
        # characters (é, ², ǅ, 中), a dash or a space is not; each family
        # checked against Python's re on the canonical name
        cases = {"éfusion.3.remat": "other", "x²fusion.y": "other", "ǅfusion.1x": "other",
                 "écopy-x": "other", "中copy": "other", "—copy-1": "copy", "é fusion.1.x": "fusion",
                 "ſfusion.1.x": "other", "_copy": "other"}
        for name, family in cases.items():
            with self.subTest(name=name):
                self.assertEqual(self.f("profsum_semantic_family", name), family)

    def test_silu_quirk(self):
        # `jit\\(silu\\)` in the reference's raw regex needs backslashes.
        self.assertEqual(self.f("profsum_semantic_family", "x", "jit(silu)/mul"),
                         "other")
        self.assertEqual(self.f("profsum_semantic_family", "x", "jit\\silu\\/mul"),
                         "norm_gating")

    def test_path_joins_with_a_space(self):
        # "copy" + " " + path: `copy$` no longer matches at the end, but
        # "copy" followed by the space is not `copy(\.|-|$)` either.
        self.assertEqual(self.f("profsum_semantic_family", "copy.1"), "copy")
        self.assertEqual(self.f("profsum_semantic_family", "copy.1", "a/b"), "other")
        self.assertEqual(self.f("profsum_semantic_family", "x", "a/copy"), "copy")
        self.assertEqual(self.f("profsum_semantic_family", "copy.1", ""), "copy")
        self.assertEqual(self.f("profsum_semantic_family", "copy.1", None), "copy")
        self.assertIsNone(self.f("profsum_semantic_family", None, "a/b"))


class ShapeSignatureTest(FuncTestCase):
    def test_spec_examples(self):  # §4.6, §7 F11
        cases = {
            "%dot.1 = f32[8,8]{1,0} dot(f32[8,8] %lhs, f32[8,8] %rhs)": "8,8",
            "%fusion.1 = f32[8,8] fusion()": "8,8",
            "%iota.296 = s32[8] iota()": "8",
            "%t = (f32[2,3]{1,0}, bf16[4]) tuple(%a, %b)": "2,3|4",
        }
        for long_name, signature in cases.items():
            with self.subTest(long_name=long_name):
                self.assertEqual(self.f("profsum_shape_signature", long_name), signature)

    def test_rules(self):
        cases = {
            # Case-insensitive dtypes, dims split/trimmed/re-joined.
            "%x = F32[ 4 , 5 ]{1,0} add(f32[9] %a)": "4,5",
            # A tuple without tokens is NULL: no fall-through to the operands.
            "%t = (f32[]) tuple(f32[5] %a)": None,
            # The single-output group holds no known dtype: NULL.
            "%x = token[1] after-all(f32[3] %a)": None,
            # No '=': the first 8 tokens anywhere.
            " ".join("f32[%d]" % i for i in range(1, 11)): "1|2|3|4|5|6|7|8",
            # The non-greedy group runs to the first ')' followed by name(.
            "a = (x) y = (f32[1]) (z) w(": "1",
            # DOTALL: the tuple may span lines.
            "%t = (f32[2],\n s32[3]) tuple()": "2|3",
            "pred[2,2] and u8[3] and s8[1]": "2,2|3|1",
            # Every dtype's first letter in upper case, between other text.
            "x BF16[3] aPRED[1]-U32[2] zS8[4]": "3|1|2|4",
            # A long s before the '[' by 3 and 4 bytes, after long text.
            "q" * 40 + " \u017f8[3] " + "r" * 40 + " \u017f32[5] [x] s8[]": "3|5",
            "[[[ bf16[[2]] ": "[2",
            "\u017f32[7]": "7",                     # IGNORECASE: long s is s
            "c64[2]": None, "f32[] scalar": None, "nothing": None,
            # An empty token normalizes to "", which is still a signature.
            "f32[ , ]": "",
        }
        for long_name, signature in cases.items():
            with self.subTest(long_name=long_name):
                self.assertEqual(self.f("profsum_shape_signature", long_name), signature)
        self.assertIsNone(self.f("profsum_shape_signature", None))
        self.assertIsNone(self.f("profsum_shape_signature", ""))


class FlopProxyTest(FuncTestCase):
    def test_f13_nulls(self):  # §7 F13
        self.assertIsNone(self.f("profsum_flop_proxy", "attention_splash",
                                 "0,8,2048,64|0,8,2048,64"))
        self.assertIsNone(self.f("profsum_flop_proxy", "loss_xent", "0,512|0,128256"))

    def test_rules(self):  # §4.6 estimate_flop_proxy
        cases = [
            ("other", "8,8", 64),
            ("fusion", "2,3|4", 6),
            ("attention_splash", "1,8,2048,64|1,8,2048,64", 2 * 8 * 2048 * 2048 * 128),
            ("attention_flash", "1,8,2048,64|1,8,2048,128",
             2 * 8 * 2048 * 2048 * (128 + 64)),
            ("attention_dense", "8,8", 64),        # no rank-4 shape: largest product
            ("loss_xent", "4,512|2,128256", 2 * 4 * 128256),
            ("loss_xent", "7", 7),                 # no rank-2 shape
            ("other", "0,5", None), ("other", "-1,5", None), ("other", "", None),
            ("other", "x", None),
            ("other", "\u0661\u0662,2", 24),       # int() reads Unicode digits
            ("other", "a-5,-3|2", 2),
        ]
        for family, signature, proxy in cases:
            with self.subTest(family=family, signature=signature):
                self.assertEqual(self.f("profsum_flop_proxy", family, signature), proxy)
        self.assertEqual(self.one("SELECT typeof(profsum_flop_proxy('other', '8,8'))"),
                         "integer")

    def test_overflow_and_null(self):
        value = self.f("profsum_flop_proxy", "other", "4294967296,4294967296")
        self.assertIsInstance(value, float)
        self.assertEqual(value, 2.0 ** 64)
        self.assertIsNone(self.f("profsum_flop_proxy", None, "8,8"))
        self.assertIsNone(self.f("profsum_flop_proxy", "other", None))


class FormatNearTest(FuncTestCase):
    """A value past a threshold (a multiple of step) never reads as it."""

    def test_values(self):
        cases = [
            ((20.026, 1, 5), "20.03"), ((19.99999, 1, 5), "19.99999"), ((79.96, 1, 5), "79.96"),
            ((20.0, 1, 5), "20.0"), ((57.14, 1, 5), "57.1"), ((12.04, 1, 5), "12.0"),
            ((-20.01, 1, 5), "-20.01"), ((0.09996, 3, 0.1), "0.09996"), ((0.1, 3, 0.1), "0.100"),
            ((1.0004, 3, 0.1), "1.0004"), ((2.0001, 3, 1), "2.0001"), ((57.14, 1, 0), "57.1"),
            ((20.026, 1, -5), "20.0"), ((20.026, "1", 5), "20.03"),
            ((19.99999999999, 1, 5), "19.99999999999"), ((1e300, 1, 5), "1.0e+300"),
            ((100.00004, 1, 5), "100.00004"),
        ]
        for args, want in cases:
            with self.subTest(args=args):
                self.assertEqual(self.f("profsum_format_near", *args), want)
        self.assertIsNone(self.f("profsum_format_near", None, 1, 5))
        # what is no number, decimals outside 0..9, a step that is not finite: errors
        for args, msg in (((1, -1, 5), "decimals must be an integer from 0 to 9"),
                          ((1, 10, 5), "decimals must be an integer from 0 to 9"),
                          ((1, 1.5, 5), "decimals must be an integer from 0 to 9"),
                          ((1, None, 5), "decimals must be an integer from 0 to 9"),
                          (("abc", 1, 5), "x must be a number"),
                          ((1, 1, float("nan")), "step must be a finite number"),
                          ((1, 1, None), "step must be a finite number")):
            with self.subTest(args=args):
                with self.assertRaises(sqlite3.Error) as cm:
                    self.f("profsum_format_near", *args)
                self.assertEqual(str(cm.exception), "profsum_format_near: " + msg)


class TfRegionTest(FuncTestCase):
    def test_spec_pieces(self):  # §4.9 examples
        cases = {
            "jit(_train_step)": "_train_step",
            "transpose(jvp(Transformer))": "Transformer",
            "dynamic_donated[1][0][0].model.params.blocks[0].attn.w_k:":
                "model.params.blocks[0].attn.w_k",
            "closed_call": "closed_call",
            "Block._attention_update": "Block._attention_update",
        }
        for tf_op, region in cases.items():
            with self.subTest(tf_op=tf_op):
                self.assertEqual(self.f("tf_region", tf_op), region)

    def test_fixtures(self):  # §7 F3, F4, F11
        f3 = "jit(_train_step)/apply_rotary_embedding/linear_softmax_cross_entropy_loss_bwd"
        self.assertEqual(self.f("tf_region", f3),
                         "_train_step=>apply_rotary_embedding=>"
                         "linear_softmax_cross_entropy_loss_bwd")
        self.assertEqual(self.f("tf_region", f3, 1), "_train_step")
        self.assertEqual(self.f("tf_region", f3, 2), "_train_step=>apply_rotary_embedding")
        self.assertEqual(self.f("tf_region", f3, 9), self.f("tf_region", f3))
        f4 = "jit(_train_step)/shard_map/apply_rotary_embedding/pallas_call"
        self.assertEqual(self.f("tf_region", f4), "_train_step=>apply_rotary_embedding")
        self.assertEqual(self.f("tf_region", "train_step/block_0/matmul"),
                         "train_step=>block_0=>matmul")
        self.assertEqual(self.f("tf_region", "jit(train_step)/optimizer_update/muonh/"
                                "newton_schulz_grouped_4d/dot_general", 3),
                         "train_step=>optimizer_update=>muonh")

    def test_wrappers(self):
        cases = {
            "vmap(jit(f))/foo(bar)": "f=>foo(bar)",
            "jit/jit()/pjit( )/remat(checkpoint(named_call(g)))": "g",
            " jit(x) : ": "jit(x)",        # ':' then ' ' stay after one strip
            "jit(a\nb)": "jit(a\nb)",      # `.` does not match a newline
            "JIT(x)": "JIT(x)",            # wrapper names are case-sensitive
            "a/ /b//": "a=>b",             # whitespace-only pieces skipped
            "::a::": "a",
            "jit( jit(x)\u00a0)": "x",     # inner text is str.strip()ped
            "jit(" * 2000 + "deep" + ")" * 2000: "deep",
        }
        for tf_op, region in cases.items():
            with self.subTest(tf_op=tf_op):
                self.assertEqual(self.f("tf_region", tf_op), region)

    def test_blacklist(self):  # §4.9 blacklist test
        for piece in ["xla", "XLA Ops", "xla_modules", "xla_trace_me", "pallas_call",
                      "shard_map", "call", "execute", "launch", "tpu_launch",
                      "pjrt_client", "xla_foo", "_xla_", "tpu_x", "stream-executor",
                      "my_thunk", "RunTime::Init", "KernelLaunch", "do_execute_it",
                      "...", "__", "THUN\u212a"]:
            with self.subTest(piece=piece):
                self.assertEqual(self.f("tf_region", "keep/" + piece), "keep")
        # Mainline list: `command_buffer` (B-variant only) is kept; so are
        # near misses ("XlaTraceMe" normalizes to "xlatraceme").
        for piece in ["command_buffer", "closed_call", "calls", "tpu", "XlaTraceMe",
                      "RUNT\u0130ME"]:
            with self.subTest(piece=piece):
                self.assertEqual(self.f("tf_region", "keep/" + piece), "keep=>" + piece)

    def test_null_cases(self):
        for tf_op in [None, "", "/", " / ", "pallas_call/shard_map", "jit()", "jit"]:
            with self.subTest(tf_op=tf_op):
                self.assertIsNone(self.f("tf_region", tf_op))
        self.assertIsNone(self.f("tf_region", "a/b", None))
        self.assertIsNone(self.f("tf_region", None, 2))

    def test_depth_errors(self):
        for depth in [0, -1, 1.5, "x"]:
            with self.subTest(depth=depth):
                with self.assertRaises(sqlite3.OperationalError) as cm:
                    self.f("tf_region", "a/b", depth)
                self.assertTrue(str(cm.exception).startswith(
                    "tf_region: depth must be a positive integer, got '"))
        self.assertSqlError("SELECT tf_region('a/b', 0)",
                            "tf_region: depth must be a positive integer, got '0'")
        self.assertEqual(self.f("tf_region", "a/b", 1.0), "a")
        self.assertEqual(self.f("tf_region", "a/b", "1"), "a")


class ExclusiveTimeTest(FuncTestCase):
    def setUp(self):
        super().setUp()
        self.db.execute("CREATE TABLE ev(idx INTEGER, pid, tid, name, ts, dur)")

    def load(self, rows, pid=1, tid=1):
        """Insert (name, ts, dur) rows on one track, idx in list order."""
        base = self.one("SELECT count(*) FROM ev")
        self.db.executemany("INSERT INTO ev VALUES (?,?,?,?,?,?)",
                            [(base + i, pid, tid, n, ts, dur)
                             for i, (n, ts, dur) in enumerate(rows)])

    def excl(self):
        """{name: exclusive time} over the whole table."""
        return dict(self.db.execute("SELECT name, %s FROM ev ORDER BY idx" % EXCL))

    def test_fixture_1(self):  # §2 example
        self.load([("fusion.1", 0, 100), ("all-reduce.1", 20, 40)])
        self.assertEqual(self.excl(), {"fusion.1": 60, "all-reduce.1": 40})
        self.assertEqual(self.one("SELECT typeof(%s) FROM ev" % EXCL), "integer")

    def test_f1_device_track(self):  # §7 F1 hot ops
        self.load([("fusion.1", 0, 100), ("all-reduce.1", 20, 40), ("softmax", 120, 60),
                   ("dependency-wait", 190, 30), ("psum.1", 230, 20)])
        self.assertEqual(self.excl(), {"fusion.1": 60, "all-reduce.1": 40, "softmax": 60,
                                       "dependency-wait": 30, "psum.1": 20})

    def test_partial_overlap_is_not_nesting(self):
        self.load([("a", 0, 10), ("b", 5, 10)])
        self.assertEqual(self.excl(), {"a": 10, "b": 10})

    def test_partial_overlap_inside_a_parent(self):
        # c starts inside b but outlives it: c is a child of p, not of b.
        self.load([("p", 0, 100), ("b", 10, 40), ("c", 40, 40)])
        self.assertEqual(self.excl(), {"p": 20, "b": 40, "c": 40})

    def test_identical_duplicates(self):
        # The first (ORDER BY order) is the parent of the second.
        self.load([("first", 0, 10), ("second", 0, 10)])
        self.assertEqual(self.excl(), {"first": 0, "second": 10})

    def test_ties_follow_the_order_by(self):
        self.db.executemany("INSERT INTO ev VALUES (?,?,?,?,?,?)",
                            [(2, 1, 1, "later", 0, 10), (1, 1, 1, "earlier", 0, 10)])
        self.assertEqual(self.excl(), {"earlier": 0, "later": 10})

    def test_overlapping_siblings_clamp_at_zero(self):
        self.load([("p", 0, 10), ("c1", 0, 8), ("c2", 2, 8)])
        self.assertEqual(self.excl(), {"p": 0, "c1": 8, "c2": 8})

    def test_input_order_does_not_matter(self):
        self.load([("child", 20, 40), ("grandchild", 30, 10), ("parent", 0, 100)])
        self.assertEqual(self.excl(), {"parent": 60, "child": 30, "grandchild": 10})

    def test_null_and_non_positive_rows(self):
        # They do not take part (the parent keeps its time); a zero-length
        # slice has exclusive time 0, the others NULL.
        self.load([("p", 0, 100), ("zero", 10, 0), ("neg", 20, -5),
                   ("nots", None, 10), ("nodur", 30, None), ("c", 40, 10)])
        self.assertEqual(self.excl(), {"p": 90, "zero": 0, "neg": None,
                                       "nots": None, "nodur": None, "c": 10})

    def test_partitions_are_independent(self):
        self.load([("a", 0, 100), ("b", 20, 40)], pid=1, tid=1)
        self.load([("c", 10, 30), ("d", 0, 5)], pid=1, tid=2)
        self.load([("e", 0, 50)], pid=2, tid=1)
        self.assertEqual(self.excl(), {"a": 60, "b": 40, "c": 30, "d": 5, "e": 50})

    def test_real_inputs(self):
        self.load([("fusion.1", 0.0, 100.5), ("all-reduce.1", 20.25, 40.0)])
        self.assertEqual(self.excl(), {"fusion.1": 60.5, "all-reduce.1": 40.0})
        self.assertEqual(
            self.db.execute("SELECT DISTINCT typeof(%s) FROM ev" % EXCL).fetchall(),
            [("real",)])

    def test_one_real_makes_the_partition_real(self):
        self.load([("a", 0, 100), ("b", 20, 40.0)], pid=1)
        self.load([("c", 0, 7)], pid=2)
        rows = self.db.execute("SELECT name, %s, typeof(%s) FROM ev ORDER BY idx"
                               % (EXCL, EXCL)).fetchall()
        self.assertEqual(rows, [("a", 60.0, "real"), ("b", 40.0, "real"),
                                ("c", 7, "integer")])

    def test_large_integers_are_exact(self):
        big = 9223372036854775000          # ts + dur overflows int64
        self.load([("a", big, big), ("b", -big, 100), ("c", -big + 1, 1)])
        self.assertEqual(self.excl(), {"a": big, "b": 99, "c": 1})
        self.load([("p", 1000000000000000000, 3), ("q", 1000000000000000001, 1)],
                  pid=2)
        self.assertEqual(self.excl()["p"], 2)

    def test_limit_stops_early(self):
        self.load([("a", 0, 100), ("b", 20, 40), ("c", 200, 1)])
        self.assertEqual(
            self.db.execute("SELECT name, %s FROM ev ORDER BY idx LIMIT 1" % EXCL).fetchall(),
            [("a", 60)])

    def test_frame_errors(self):
        self.load([("a", 0, 100), ("b", 20, 40), ("c", 200, 10), ("d", 300, 10)])
        for sql in [
            # Default (running) frame: xStep after xValue.
            "SELECT exclusive_time(ts, dur) OVER (PARTITION BY pid, tid ORDER BY idx) FROM ev",
            # Sliding frames call xInverse.
            "SELECT exclusive_time(ts, dur) OVER (ORDER BY idx ROWS BETWEEN 1 PRECEDING "
            "AND 1 FOLLOWING) FROM ev",
            "SELECT exclusive_time(ts, dur) OVER (ORDER BY idx ROWS BETWEEN CURRENT ROW "
            "AND UNBOUNDED FOLLOWING) FROM ev",
            # EXCLUDE: SQLite takes each value from xFinal.
            "SELECT exclusive_time(ts, dur) OVER (ORDER BY idx ROWS BETWEEN UNBOUNDED "
            "PRECEDING AND UNBOUNDED FOLLOWING EXCLUDE CURRENT ROW) FROM ev",
            # Plain aggregate.
            "SELECT exclusive_time(ts, dur) FROM ev",
        ]:
            with self.subTest(sql=sql):
                self.assertSqlError(sql, FRAME_ERR)

    def test_when_a_wrong_frame_is_seen(self):
        # docs/functions.md's table of wrong frames: how many rows come out
        # before the error, over what, and the largest partition that
        # raises no error.  Python steps one row ahead, so it gets one row
        # less before the error; LIMIT k steps k rows and no more.
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "functions.md")
        table = re.findall(r"^\| `(ROWS BETWEEN [A-Z0-9 ]+)` \| (\d+) \| (its own frame|the partition) "
                           r"\| (\d+) rows? \|$", open(path, encoding="utf-8").read(), re.M)
        self.assertEqual(len(table), 6, table)
        events = [(0, 10), (2, 3), (6, 2), (12, 5), (13, 1), (20, 4)]
        whole_frame = FRAME[FRAME.index("ROWS"):-1]

        def run(n, frame, limit=""):
            vals = ", ".join("(%d, %d, %d)" % (i, t, d) for i, (t, d) in enumerate(events[:n]))
            got = []
            try:
                for r in self.db.execute("WITH t(idx, ts, dur) AS (VALUES %s) SELECT exclusive_time(ts, dur) "
                                         "OVER (ORDER BY idx %s) FROM t %s" % (vals, frame, limit)):
                    got.append(r[0])
            except sqlite3.OperationalError as e:
                return got, str(e)
            return got, None

        for frame, before, over, most in table:
            before, most = int(before), int(most)
            # the rows of the first row's frame: all of them but with "M FOLLOWING"
            reach = 1 + int(frame.split(" AND ")[1].split()[0]) if frame.endswith(" FOLLOWING") \
                and "UNBOUNDED FOLLOWING" not in frame else None
            if frame.endswith("CURRENT ROW"):
                reach = 1
            for n in range(1, len(events) + 1):
                with self.subTest(frame=frame, rows=n):
                    whole = run(n, whole_frame)[0]
                    got, err = run(n, frame)
                    if n <= most:
                        self.assertEqual((got, err), (whole, None))
                        continue
                    self.assertEqual(err, FRAME_ERR)
                    self.assertEqual(len(got), before - 1)
                    first, err = run(n, frame, "LIMIT %d" % before)
                    self.assertIsNone(err)
                    if over == "the partition":
                        self.assertEqual(first, whole[:before])
                    else:
                        self.assertEqual(first, run(reach, whole_frame)[0][:1])

    def test_filter_is_an_error(self):
        self.load([("a", 0, 100), ("b", 20, 40)])
        self.assertSqlError(
            "SELECT exclusive_time(ts, dur) FILTER (WHERE idx > 0) %s FROM ev" % FRAME,
            "exclusive_time: more rows than were stepped (FILTER is not supported); "
            "requires the frame " + FRAME)

    def test_text_and_blob_are_errors(self):
        self.load([("a", 0, 100)])
        self.assertSqlError("SELECT exclusive_time(ts, '100a') %s FROM ev" % FRAME,
                            "exclusive_time: dur must be a number or NULL, got text '100a'")
        self.assertSqlError("SELECT exclusive_time(x'00', dur) %s FROM ev" % FRAME,
                            "exclusive_time: ts must be a number or NULL, got a blob")

    def test_many_rows(self):
        # 20000 nested pairs on one track: each parent [10k, 10k+10) holds a
        # child [10k+2, 10k+5).
        rows = []
        for k in range(20000):
            rows.append(("p%d" % k, 10 * k, 10))
            rows.append(("c%d" % k, 10 * k + 2, 3))
        self.load(rows)
        got = self.db.execute("SELECT sum(e), count(e), min(e), max(e) FROM "
                              "(SELECT %s AS e FROM ev)" % EXCL).fetchone()
        self.assertEqual(got, (200000, 40000, 3, 7))


class BreakdownIntegrationTest(FuncTestCase):
    """§4.4 per-track breakdown in SQL: exclusive_time + classify_op."""

    QUERY = ("WITH e AS (SELECT name, process_name, thread_name, %s AS excl FROM ev) "
             "SELECT classify_op(name, process_name, thread_name) AS cat, sum(excl) "
             "FROM e GROUP BY cat HAVING cat IS NOT NULL ORDER BY cat" % EXCL)

    def setUp(self):
        super().setUp()
        self.db.execute("CREATE TABLE ev(idx INTEGER, pid, tid, name, ts, dur, "
                        "process_name, thread_name)")

    def load(self, rows):
        self.db.executemany("INSERT INTO ev VALUES (?,?,?,?,?,?,?,?)",
                            [(i,) + r for i, r in enumerate(rows)])

    def test_f1_before(self):  # §7 F1-before: compute 120, comm 60, host 80, stall 50
        dev, host = ("/device:TPU:0", "/host:CPU")
        rows = [(1, 1, str(i), i * 1000, d, dev, "Steps")
                for i, d in enumerate([100, 110, 120, 130, 140, 150])]
        rows += [(1, 2, n, ts, d, dev, "XLA Ops") for n, ts, d in [
            ("fusion.1", 0, 100), ("all-reduce.1", 20, 40), ("softmax", 120, 60),
            ("dependency-wait", 190, 30), ("psum.1", 230, 20)]]
        rows += [(2, 1, "python_host_compute", 0, 80, host, "main"),
                 (2, 1, "threading wait", 90, 20, host, "main")]
        self.load(rows)
        self.assertEqual(self.db.execute(self.QUERY).fetchall(),
                         [("communication", 60), ("compute", 120), ("host", 80),
                          ("stall", 50)])

    def test_f3(self):  # §7 F3: compute 70, communication 10
        dev = "/device:TPU:0"
        self.load([
            (1, 2, "train_step=>forward=>matmul", 0, 50, dev, "XLA Ops"),
            (1, 2, "_linear_softmax_cross_entropy_loss_bwd_pallas_mosaic_tpu_combined.1",
             100, 20, dev, "XLA Ops"),
            (1, 2, "train_step=>backward=>all-reduce.1", 140, 10, dev, "XLA Ops")])
        self.assertEqual(self.db.execute(self.QUERY).fetchall(),
                         [("communication", 10), ("compute", 70)])

    def test_f9_gpu(self):  # §7 F9: host 1250, compute 180, communication 90
        gpu, host = ("/device:GPU:0", "/host:CPU")
        self.load([
            (2, 1, "train", 0, 500, host, "python3"),
            (2, 1, "train", 500, 400, host, "python3"),
            (2, 1, "train", 900, 350, host, "python3"),
            (1, 10, "fusion.1", 10, 100, gpu, "Stream #0(compute)"),
            (1, 10, "custom-call.2", 120, 80, gpu, "Stream #0(compute)"),
            (1, 11, "ncclDevKernel_AllGather_RING_LL", 200, 50, gpu, "Stream #1(nccl)"),
            (1, 11, "ncclDevKernel_ReduceScatter_RING_LL", 260, 40, gpu,
             "Stream #1(nccl)")])
        self.assertEqual(self.db.execute(self.QUERY).fetchall(),
                         [("communication", 90), ("compute", 180), ("host", 1250)])
        self.assertEqual(
            self.db.execute("SELECT profsum_collective(name), sum(dur) FROM ev "
                            "WHERE profsum_collective(name) IS NOT NULL "
                            "GROUP BY 1 ORDER BY 2 DESC").fetchall(),
            [("all-gather", 50), ("reduce-scatter", 40)])


if __name__ == "__main__":
    unittest.main()
