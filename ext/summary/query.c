/*
** query.c — profsum_query_json(trace, question [, top_k]): the answer of
** query_profile_summary() (docs/spec/tools.md
** §2) for an imported trace, as JSON text (Python json.dumps(indent=2,
** sort_keys=True), jsontree.c).
**
**   SELECT profsum_query_json('baseline', 'What are the top 3 ops by exclusive time?', 3);
**   SELECT profsum_query_json(1, 'what is the gap before iota.296?');
**   SELECT profsum_query_json('baseline', 'show context for op copy.564');
**
** The answer is built from the trace's profile_summary.v1 document
** (profsumDocBuild() with the trace's stored knobs), so a trace imported
** from a v1 file is answered from that file.
**
** Intents are tested in the order of §2 by plain substring tests on the
** lower-cased question.  Targets ("the gap before X", "context for X")
** are extracted from the original text as the reference's regular
** expressions do, with Python 3 semantics for str.lower(), str.strip(),
** \b, \w, \s and \d over all of Unicode: the character tables below were
** generated from Python 3.11's re and str.lower (tests/test_query.py checks
** samples against Python).  IGNORECASE keyword matching folds the only
** non-ASCII code points Python's re equates with the letters involved
** (U+0130 and U+0131 match 'i', in "operation").  str.lower() includes its
** one rule of context: a capital sigma at the end of a word becomes the
** final sigma (finalSigma).
**
** Reads tables only: not DIRECTONLY, not DETERMINISTIC (the tables change).
*/
#include "profsum_int.h"
#include "query.h"
#include "summary_doc.h"
#include "doc_int.h"
#include "funcs.h"
#include "jsontree.h"
#include "sqlcall.h"
#include "pytext.h"

#include <string.h>

/* ================================================================== */
/* Unicode tables                                                      */
/* ================================================================== */
/* Generated from Python 3.11.2 (str.lower), code points >= 0x80
** (surrogates excluded; re's \w, \d and \s are in ext/util/pytext.c):
**   aLowerRun: the cp with len(chr(cp).lower())==1 and a different lower
**     case, merged into runs of equal delta ord(lower)-cp and stride 1 or 2
**     (U+0130, whose lower case is two code points, is handled in code). */
/* {first, last, delta, stride}: cp in [first,last] with (cp-first)%stride==0 lowers to cp+delta. */
static const int aLowerRun[][4] = {
  {0xC0,0xD6,32,1},{0xD8,0xDE,32,1},{0x100,0x12E,1,2},{0x132,0x136,1,2},
  {0x139,0x147,1,2},{0x14A,0x176,1,2},{0x178,0x178,-121,1},{0x179,0x17D,1,2},
  {0x181,0x181,210,1},{0x182,0x184,1,2},{0x186,0x186,206,1},{0x187,0x187,1,1},
  {0x189,0x18A,205,1},{0x18B,0x18B,1,1},{0x18E,0x18E,79,1},
  {0x18F,0x18F,202,1},{0x190,0x190,203,1},{0x191,0x191,1,1},
  {0x193,0x193,205,1},{0x194,0x194,207,1},{0x196,0x196,211,1},
  {0x197,0x197,209,1},{0x198,0x198,1,1},{0x19C,0x19C,211,1},
  {0x19D,0x19D,213,1},{0x19F,0x19F,214,1},{0x1A0,0x1A4,1,2},
  {0x1A6,0x1A6,218,1},{0x1A7,0x1A7,1,1},{0x1A9,0x1A9,218,1},{0x1AC,0x1AC,1,1},
  {0x1AE,0x1AE,218,1},{0x1AF,0x1AF,1,1},{0x1B1,0x1B2,217,1},{0x1B3,0x1B5,1,2},
  {0x1B7,0x1B7,219,1},{0x1B8,0x1B8,1,1},{0x1BC,0x1BC,1,1},{0x1C4,0x1C4,2,1},
  {0x1C5,0x1C5,1,1},{0x1C7,0x1C7,2,1},{0x1C8,0x1C8,1,1},{0x1CA,0x1CA,2,1},
  {0x1CB,0x1DB,1,2},{0x1DE,0x1EE,1,2},{0x1F1,0x1F1,2,1},{0x1F2,0x1F4,1,2},
  {0x1F6,0x1F6,-97,1},{0x1F7,0x1F7,-56,1},{0x1F8,0x21E,1,2},
  {0x220,0x220,-130,1},{0x222,0x232,1,2},{0x23A,0x23A,10795,1},
  {0x23B,0x23B,1,1},{0x23D,0x23D,-163,1},{0x23E,0x23E,10792,1},
  {0x241,0x241,1,1},{0x243,0x243,-195,1},{0x244,0x244,69,1},
  {0x245,0x245,71,1},{0x246,0x24E,1,2},{0x370,0x372,1,2},{0x376,0x376,1,1},
  {0x37F,0x37F,116,1},{0x386,0x386,38,1},{0x388,0x38A,37,1},
  {0x38C,0x38C,64,1},{0x38E,0x38F,63,1},{0x391,0x3A1,32,1},{0x3A3,0x3AB,32,1},
  {0x3CF,0x3CF,8,1},{0x3D8,0x3EE,1,2},{0x3F4,0x3F4,-60,1},{0x3F7,0x3F7,1,1},
  {0x3F9,0x3F9,-7,1},{0x3FA,0x3FA,1,1},{0x3FD,0x3FF,-130,1},
  {0x400,0x40F,80,1},{0x410,0x42F,32,1},{0x460,0x480,1,2},{0x48A,0x4BE,1,2},
  {0x4C0,0x4C0,15,1},{0x4C1,0x4CD,1,2},{0x4D0,0x52E,1,2},{0x531,0x556,48,1},
  {0x10A0,0x10C5,7264,1},{0x10C7,0x10C7,7264,1},{0x10CD,0x10CD,7264,1},
  {0x13A0,0x13EF,38864,1},{0x13F0,0x13F5,8,1},{0x1C90,0x1CBA,-3008,1},
  {0x1CBD,0x1CBF,-3008,1},{0x1E00,0x1E94,1,2},{0x1E9E,0x1E9E,-7615,1},
  {0x1EA0,0x1EFE,1,2},{0x1F08,0x1F0F,-8,1},{0x1F18,0x1F1D,-8,1},
  {0x1F28,0x1F2F,-8,1},{0x1F38,0x1F3F,-8,1},{0x1F48,0x1F4D,-8,1},
  {0x1F59,0x1F5F,-8,2},{0x1F68,0x1F6F,-8,1},{0x1F88,0x1F8F,-8,1},
  {0x1F98,0x1F9F,-8,1},{0x1FA8,0x1FAF,-8,1},{0x1FB8,0x1FB9,-8,1},
  {0x1FBA,0x1FBB,-74,1},{0x1FBC,0x1FBC,-9,1},{0x1FC8,0x1FCB,-86,1},
  {0x1FCC,0x1FCC,-9,1},{0x1FD8,0x1FD9,-8,1},{0x1FDA,0x1FDB,-100,1},
  {0x1FE8,0x1FE9,-8,1},{0x1FEA,0x1FEB,-112,1},{0x1FEC,0x1FEC,-7,1},
  {0x1FF8,0x1FF9,-128,1},{0x1FFA,0x1FFB,-126,1},{0x1FFC,0x1FFC,-9,1},
  {0x2126,0x2126,-7517,1},{0x212A,0x212A,-8383,1},{0x212B,0x212B,-8262,1},
  {0x2132,0x2132,28,1},{0x2160,0x216F,16,1},{0x2183,0x2183,1,1},
  {0x24B6,0x24CF,26,1},{0x2C00,0x2C2F,48,1},{0x2C60,0x2C60,1,1},
  {0x2C62,0x2C62,-10743,1},{0x2C63,0x2C63,-3814,1},{0x2C64,0x2C64,-10727,1},
  {0x2C67,0x2C6B,1,2},{0x2C6D,0x2C6D,-10780,1},{0x2C6E,0x2C6E,-10749,1},
  {0x2C6F,0x2C6F,-10783,1},{0x2C70,0x2C70,-10782,1},{0x2C72,0x2C72,1,1},
  {0x2C75,0x2C75,1,1},{0x2C7E,0x2C7F,-10815,1},{0x2C80,0x2CE2,1,2},
  {0x2CEB,0x2CED,1,2},{0x2CF2,0x2CF2,1,1},{0xA640,0xA66C,1,2},
  {0xA680,0xA69A,1,2},{0xA722,0xA72E,1,2},{0xA732,0xA76E,1,2},
  {0xA779,0xA77B,1,2},{0xA77D,0xA77D,-35332,1},{0xA77E,0xA786,1,2},
  {0xA78B,0xA78B,1,1},{0xA78D,0xA78D,-42280,1},{0xA790,0xA792,1,2},
  {0xA796,0xA7A8,1,2},{0xA7AA,0xA7AA,-42308,1},{0xA7AB,0xA7AB,-42319,1},
  {0xA7AC,0xA7AC,-42315,1},{0xA7AD,0xA7AD,-42305,1},{0xA7AE,0xA7AE,-42308,1},
  {0xA7B0,0xA7B0,-42258,1},{0xA7B1,0xA7B1,-42282,1},{0xA7B2,0xA7B2,-42261,1},
  {0xA7B3,0xA7B3,928,1},{0xA7B4,0xA7C2,1,2},{0xA7C4,0xA7C4,-48,1},
  {0xA7C5,0xA7C5,-42307,1},{0xA7C6,0xA7C6,-35384,1},{0xA7C7,0xA7C9,1,2},
  {0xA7D0,0xA7D0,1,1},{0xA7D6,0xA7D8,1,2},{0xA7F5,0xA7F5,1,1},
  {0xFF21,0xFF3A,32,1},{0x10400,0x10427,40,1},{0x104B0,0x104D3,40,1},
  {0x10570,0x1057A,39,1},{0x1057C,0x1058A,39,1},{0x1058C,0x10592,39,1},
  {0x10594,0x10595,39,1},{0x10C80,0x10CB2,64,1},{0x118A0,0x118BF,32,1},
  {0x16E40,0x16E5F,32,1},{0x1E900,0x1E921,34,1},
};

/* The context of a capital sigma in Python's str.lower(), generated like
** the table above from Python 3.11 (lower() of probe strings around a
** sigma): the Case_Ignorable code points, as runs ... */
static const unsigned int aCaseIgnorable[][2] = {
  {0x27,0x27}, {0x2E,0x2E}, {0x3A,0x3A}, {0x5E,0x5E}, {0x60,0x60}, {0xA8,0xA8}, {0xAD,0xAD},
  {0xAF,0xAF}, {0xB4,0xB4}, {0xB7,0xB8}, {0x2B0,0x36F}, {0x374,0x375}, {0x37A,0x37A}, {0x384,0x385},
  {0x387,0x387}, {0x483,0x489}, {0x559,0x559}, {0x55F,0x55F}, {0x591,0x5BD}, {0x5BF,0x5BF},
  {0x5C1,0x5C2}, {0x5C4,0x5C5}, {0x5C7,0x5C7}, {0x5F4,0x5F4}, {0x600,0x605}, {0x610,0x61A},
  {0x61C,0x61C}, {0x640,0x640}, {0x64B,0x65F}, {0x670,0x670}, {0x6D6,0x6DD}, {0x6DF,0x6E8},
  {0x6EA,0x6ED}, {0x70F,0x70F}, {0x711,0x711}, {0x730,0x74A}, {0x7A6,0x7B0}, {0x7EB,0x7F5},
  {0x7FA,0x7FA}, {0x7FD,0x7FD}, {0x816,0x82D}, {0x859,0x85B}, {0x888,0x888}, {0x890,0x891},
  {0x898,0x89F}, {0x8C9,0x902}, {0x93A,0x93A}, {0x93C,0x93C}, {0x941,0x948}, {0x94D,0x94D},
  {0x951,0x957}, {0x962,0x963}, {0x971,0x971}, {0x981,0x981}, {0x9BC,0x9BC}, {0x9C1,0x9C4},
  {0x9CD,0x9CD}, {0x9E2,0x9E3}, {0x9FE,0x9FE}, {0xA01,0xA02}, {0xA3C,0xA3C}, {0xA41,0xA42},
  {0xA47,0xA48}, {0xA4B,0xA4D}, {0xA51,0xA51}, {0xA70,0xA71}, {0xA75,0xA75}, {0xA81,0xA82},
  {0xABC,0xABC}, {0xAC1,0xAC5}, {0xAC7,0xAC8}, {0xACD,0xACD}, {0xAE2,0xAE3}, {0xAFA,0xAFF},
  {0xB01,0xB01}, {0xB3C,0xB3C}, {0xB3F,0xB3F}, {0xB41,0xB44}, {0xB4D,0xB4D}, {0xB55,0xB56},
  {0xB62,0xB63}, {0xB82,0xB82}, {0xBC0,0xBC0}, {0xBCD,0xBCD}, {0xC00,0xC00}, {0xC04,0xC04},
  {0xC3C,0xC3C}, {0xC3E,0xC40}, {0xC46,0xC48}, {0xC4A,0xC4D}, {0xC55,0xC56}, {0xC62,0xC63},
  {0xC81,0xC81}, {0xCBC,0xCBC}, {0xCBF,0xCBF}, {0xCC6,0xCC6}, {0xCCC,0xCCD}, {0xCE2,0xCE3},
  {0xD00,0xD01}, {0xD3B,0xD3C}, {0xD41,0xD44}, {0xD4D,0xD4D}, {0xD62,0xD63}, {0xD81,0xD81},
  {0xDCA,0xDCA}, {0xDD2,0xDD4}, {0xDD6,0xDD6}, {0xE31,0xE31}, {0xE34,0xE3A}, {0xE46,0xE4E},
  {0xEB1,0xEB1}, {0xEB4,0xEBC}, {0xEC6,0xEC6}, {0xEC8,0xECD}, {0xF18,0xF19}, {0xF35,0xF35},
  {0xF37,0xF37}, {0xF39,0xF39}, {0xF71,0xF7E}, {0xF80,0xF84}, {0xF86,0xF87}, {0xF8D,0xF97},
  {0xF99,0xFBC}, {0xFC6,0xFC6}, {0x102D,0x1030}, {0x1032,0x1037}, {0x1039,0x103A}, {0x103D,0x103E},
  {0x1058,0x1059}, {0x105E,0x1060}, {0x1071,0x1074}, {0x1082,0x1082}, {0x1085,0x1086},
  {0x108D,0x108D}, {0x109D,0x109D}, {0x10FC,0x10FC}, {0x135D,0x135F}, {0x1712,0x1714},
  {0x1732,0x1733}, {0x1752,0x1753}, {0x1772,0x1773}, {0x17B4,0x17B5}, {0x17B7,0x17BD},
  {0x17C6,0x17C6}, {0x17C9,0x17D3}, {0x17D7,0x17D7}, {0x17DD,0x17DD}, {0x180B,0x180F},
  {0x1843,0x1843}, {0x1885,0x1886}, {0x18A9,0x18A9}, {0x1920,0x1922}, {0x1927,0x1928},
  {0x1932,0x1932}, {0x1939,0x193B}, {0x1A17,0x1A18}, {0x1A1B,0x1A1B}, {0x1A56,0x1A56},
  {0x1A58,0x1A5E}, {0x1A60,0x1A60}, {0x1A62,0x1A62}, {0x1A65,0x1A6C}, {0x1A73,0x1A7C},
  {0x1A7F,0x1A7F}, {0x1AA7,0x1AA7}, {0x1AB0,0x1ACE}, {0x1B00,0x1B03}, {0x1B34,0x1B34},
  {0x1B36,0x1B3A}, {0x1B3C,0x1B3C}, {0x1B42,0x1B42}, {0x1B6B,0x1B73}, {0x1B80,0x1B81},
  {0x1BA2,0x1BA5}, {0x1BA8,0x1BA9}, {0x1BAB,0x1BAD}, {0x1BE6,0x1BE6}, {0x1BE8,0x1BE9},
  {0x1BED,0x1BED}, {0x1BEF,0x1BF1}, {0x1C2C,0x1C33}, {0x1C36,0x1C37}, {0x1C78,0x1C7D},
  {0x1CD0,0x1CD2}, {0x1CD4,0x1CE0}, {0x1CE2,0x1CE8}, {0x1CED,0x1CED}, {0x1CF4,0x1CF4},
  {0x1CF8,0x1CF9}, {0x1D2C,0x1D6A}, {0x1D78,0x1D78}, {0x1D9B,0x1DFF}, {0x1FBD,0x1FBD},
  {0x1FBF,0x1FC1}, {0x1FCD,0x1FCF}, {0x1FDD,0x1FDF}, {0x1FED,0x1FEF}, {0x1FFD,0x1FFE},
  {0x200B,0x200F}, {0x2018,0x2019}, {0x2024,0x2024}, {0x2027,0x2027}, {0x202A,0x202E},
  {0x2060,0x2064}, {0x2066,0x206F}, {0x2071,0x2071}, {0x207F,0x207F}, {0x2090,0x209C},
  {0x20D0,0x20F0}, {0x2C7C,0x2C7D}, {0x2CEF,0x2CF1}, {0x2D6F,0x2D6F}, {0x2D7F,0x2D7F},
  {0x2DE0,0x2DFF}, {0x2E2F,0x2E2F}, {0x3005,0x3005}, {0x302A,0x302D}, {0x3031,0x3035},
  {0x303B,0x303B}, {0x3099,0x309E}, {0x30FC,0x30FE}, {0xA015,0xA015}, {0xA4F8,0xA4FD},
  {0xA60C,0xA60C}, {0xA66F,0xA672}, {0xA674,0xA67D}, {0xA67F,0xA67F}, {0xA69C,0xA69F},
  {0xA6F0,0xA6F1}, {0xA700,0xA721}, {0xA770,0xA770}, {0xA788,0xA78A}, {0xA7F2,0xA7F4},
  {0xA7F8,0xA7F9}, {0xA802,0xA802}, {0xA806,0xA806}, {0xA80B,0xA80B}, {0xA825,0xA826},
  {0xA82C,0xA82C}, {0xA8C4,0xA8C5}, {0xA8E0,0xA8F1}, {0xA8FF,0xA8FF}, {0xA926,0xA92D},
  {0xA947,0xA951}, {0xA980,0xA982}, {0xA9B3,0xA9B3}, {0xA9B6,0xA9B9}, {0xA9BC,0xA9BD},
  {0xA9CF,0xA9CF}, {0xA9E5,0xA9E6}, {0xAA29,0xAA2E}, {0xAA31,0xAA32}, {0xAA35,0xAA36},
  {0xAA43,0xAA43}, {0xAA4C,0xAA4C}, {0xAA70,0xAA70}, {0xAA7C,0xAA7C}, {0xAAB0,0xAAB0},
  {0xAAB2,0xAAB4}, {0xAAB7,0xAAB8}, {0xAABE,0xAABF}, {0xAAC1,0xAAC1}, {0xAADD,0xAADD},
  {0xAAEC,0xAAED}, {0xAAF3,0xAAF4}, {0xAAF6,0xAAF6}, {0xAB5B,0xAB5F}, {0xAB69,0xAB6B},
  {0xABE5,0xABE5}, {0xABE8,0xABE8}, {0xABED,0xABED}, {0xFB1E,0xFB1E}, {0xFBB2,0xFBC2},
  {0xFE00,0xFE0F}, {0xFE13,0xFE13}, {0xFE20,0xFE2F}, {0xFE52,0xFE52}, {0xFE55,0xFE55},
  {0xFEFF,0xFEFF}, {0xFF07,0xFF07}, {0xFF0E,0xFF0E}, {0xFF1A,0xFF1A}, {0xFF3E,0xFF3E},
  {0xFF40,0xFF40}, {0xFF70,0xFF70}, {0xFF9E,0xFF9F}, {0xFFE3,0xFFE3}, {0xFFF9,0xFFFB},
  {0x101FD,0x101FD}, {0x102E0,0x102E0}, {0x10376,0x1037A}, {0x10780,0x10785}, {0x10787,0x107B0},
  {0x107B2,0x107BA}, {0x10A01,0x10A03}, {0x10A05,0x10A06}, {0x10A0C,0x10A0F}, {0x10A38,0x10A3A},
  {0x10A3F,0x10A3F}, {0x10AE5,0x10AE6}, {0x10D24,0x10D27}, {0x10EAB,0x10EAC}, {0x10F46,0x10F50},
  {0x10F82,0x10F85}, {0x11001,0x11001}, {0x11038,0x11046}, {0x11070,0x11070}, {0x11073,0x11074},
  {0x1107F,0x11081}, {0x110B3,0x110B6}, {0x110B9,0x110BA}, {0x110BD,0x110BD}, {0x110C2,0x110C2},
  {0x110CD,0x110CD}, {0x11100,0x11102}, {0x11127,0x1112B}, {0x1112D,0x11134}, {0x11173,0x11173},
  {0x11180,0x11181}, {0x111B6,0x111BE}, {0x111C9,0x111CC}, {0x111CF,0x111CF}, {0x1122F,0x11231},
  {0x11234,0x11234}, {0x11236,0x11237}, {0x1123E,0x1123E}, {0x112DF,0x112DF}, {0x112E3,0x112EA},
  {0x11300,0x11301}, {0x1133B,0x1133C}, {0x11340,0x11340}, {0x11366,0x1136C}, {0x11370,0x11374},
  {0x11438,0x1143F}, {0x11442,0x11444}, {0x11446,0x11446}, {0x1145E,0x1145E}, {0x114B3,0x114B8},
  {0x114BA,0x114BA}, {0x114BF,0x114C0}, {0x114C2,0x114C3}, {0x115B2,0x115B5}, {0x115BC,0x115BD},
  {0x115BF,0x115C0}, {0x115DC,0x115DD}, {0x11633,0x1163A}, {0x1163D,0x1163D}, {0x1163F,0x11640},
  {0x116AB,0x116AB}, {0x116AD,0x116AD}, {0x116B0,0x116B5}, {0x116B7,0x116B7}, {0x1171D,0x1171F},
  {0x11722,0x11725}, {0x11727,0x1172B}, {0x1182F,0x11837}, {0x11839,0x1183A}, {0x1193B,0x1193C},
  {0x1193E,0x1193E}, {0x11943,0x11943}, {0x119D4,0x119D7}, {0x119DA,0x119DB}, {0x119E0,0x119E0},
  {0x11A01,0x11A0A}, {0x11A33,0x11A38}, {0x11A3B,0x11A3E}, {0x11A47,0x11A47}, {0x11A51,0x11A56},
  {0x11A59,0x11A5B}, {0x11A8A,0x11A96}, {0x11A98,0x11A99}, {0x11C30,0x11C36}, {0x11C38,0x11C3D},
  {0x11C3F,0x11C3F}, {0x11C92,0x11CA7}, {0x11CAA,0x11CB0}, {0x11CB2,0x11CB3}, {0x11CB5,0x11CB6},
  {0x11D31,0x11D36}, {0x11D3A,0x11D3A}, {0x11D3C,0x11D3D}, {0x11D3F,0x11D45}, {0x11D47,0x11D47},
  {0x11D90,0x11D91}, {0x11D95,0x11D95}, {0x11D97,0x11D97}, {0x11EF3,0x11EF4}, {0x13430,0x13438},
  {0x16AF0,0x16AF4}, {0x16B30,0x16B36}, {0x16B40,0x16B43}, {0x16F4F,0x16F4F}, {0x16F8F,0x16F9F},
  {0x16FE0,0x16FE1}, {0x16FE3,0x16FE4}, {0x1AFF0,0x1AFF3}, {0x1AFF5,0x1AFFB}, {0x1AFFD,0x1AFFE},
  {0x1BC9D,0x1BC9E}, {0x1BCA0,0x1BCA3}, {0x1CF00,0x1CF2D}, {0x1CF30,0x1CF46}, {0x1D167,0x1D169},
  {0x1D173,0x1D182}, {0x1D185,0x1D18B}, {0x1D1AA,0x1D1AD}, {0x1D242,0x1D244}, {0x1DA00,0x1DA36},
  {0x1DA3B,0x1DA6C}, {0x1DA75,0x1DA75}, {0x1DA84,0x1DA84}, {0x1DA9B,0x1DA9F}, {0x1DAA1,0x1DAAF},
  {0x1E000,0x1E006}, {0x1E008,0x1E018}, {0x1E01B,0x1E021}, {0x1E023,0x1E024}, {0x1E026,0x1E02A},
  {0x1E130,0x1E13D}, {0x1E2AE,0x1E2AE}, {0x1E2EC,0x1E2EF}, {0x1E8D0,0x1E8D6}, {0x1E944,0x1E94B},
  {0x1F3FB,0x1F3FF}, {0xE0001,0xE0001}, {0xE0020,0xE007F}, {0xE0100,0xE01EF},
};

/* ... and the Cased ones that are not Case_Ignorable. */
static const unsigned int aCasedRun[][2] = {
  {0x41,0x5A}, {0x61,0x7A}, {0xAA,0xAA}, {0xB5,0xB5}, {0xBA,0xBA}, {0xC0,0xD6}, {0xD8,0xF6},
  {0xF8,0x1BA}, {0x1BC,0x1BF}, {0x1C4,0x293}, {0x295,0x2AF}, {0x370,0x373}, {0x376,0x377},
  {0x37B,0x37D}, {0x37F,0x37F}, {0x386,0x386}, {0x388,0x38A}, {0x38C,0x38C}, {0x38E,0x3A1},
  {0x3A3,0x3F5}, {0x3F7,0x481}, {0x48A,0x52F}, {0x531,0x556}, {0x560,0x588}, {0x10A0,0x10C5},
  {0x10C7,0x10C7}, {0x10CD,0x10CD}, {0x10D0,0x10FA}, {0x10FD,0x10FF}, {0x13A0,0x13F5},
  {0x13F8,0x13FD}, {0x1C80,0x1C88}, {0x1C90,0x1CBA}, {0x1CBD,0x1CBF}, {0x1D00,0x1D2B},
  {0x1D6B,0x1D77}, {0x1D79,0x1D9A}, {0x1E00,0x1F15}, {0x1F18,0x1F1D}, {0x1F20,0x1F45},
  {0x1F48,0x1F4D}, {0x1F50,0x1F57}, {0x1F59,0x1F59}, {0x1F5B,0x1F5B}, {0x1F5D,0x1F5D},
  {0x1F5F,0x1F7D}, {0x1F80,0x1FB4}, {0x1FB6,0x1FBC}, {0x1FBE,0x1FBE}, {0x1FC2,0x1FC4},
  {0x1FC6,0x1FCC}, {0x1FD0,0x1FD3}, {0x1FD6,0x1FDB}, {0x1FE0,0x1FEC}, {0x1FF2,0x1FF4},
  {0x1FF6,0x1FFC}, {0x2102,0x2102}, {0x2107,0x2107}, {0x210A,0x2113}, {0x2115,0x2115},
  {0x2119,0x211D}, {0x2124,0x2124}, {0x2126,0x2126}, {0x2128,0x2128}, {0x212A,0x212D},
  {0x212F,0x2134}, {0x2139,0x2139}, {0x213C,0x213F}, {0x2145,0x2149}, {0x214E,0x214E},
  {0x2160,0x217F}, {0x2183,0x2184}, {0x24B6,0x24E9}, {0x2C00,0x2C7B}, {0x2C7E,0x2CE4},
  {0x2CEB,0x2CEE}, {0x2CF2,0x2CF3}, {0x2D00,0x2D25}, {0x2D27,0x2D27}, {0x2D2D,0x2D2D},
  {0xA640,0xA66D}, {0xA680,0xA69B}, {0xA722,0xA76F}, {0xA771,0xA787}, {0xA78B,0xA78E},
  {0xA790,0xA7CA}, {0xA7D0,0xA7D1}, {0xA7D3,0xA7D3}, {0xA7D5,0xA7D9}, {0xA7F5,0xA7F6},
  {0xA7FA,0xA7FA}, {0xAB30,0xAB5A}, {0xAB60,0xAB68}, {0xAB70,0xABBF}, {0xFB00,0xFB06},
  {0xFB13,0xFB17}, {0xFF21,0xFF3A}, {0xFF41,0xFF5A}, {0x10400,0x1044F}, {0x104B0,0x104D3},
  {0x104D8,0x104FB}, {0x10570,0x1057A}, {0x1057C,0x1058A}, {0x1058C,0x10592}, {0x10594,0x10595},
  {0x10597,0x105A1}, {0x105A3,0x105B1}, {0x105B3,0x105B9}, {0x105BB,0x105BC}, {0x10C80,0x10CB2},
  {0x10CC0,0x10CF2}, {0x118A0,0x118DF}, {0x16E40,0x16E7F}, {0x1D400,0x1D454}, {0x1D456,0x1D49C},
  {0x1D49E,0x1D49F}, {0x1D4A2,0x1D4A2}, {0x1D4A5,0x1D4A6}, {0x1D4A9,0x1D4AC}, {0x1D4AE,0x1D4B9},
  {0x1D4BB,0x1D4BB}, {0x1D4BD,0x1D4C3}, {0x1D4C5,0x1D505}, {0x1D507,0x1D50A}, {0x1D50D,0x1D514},
  {0x1D516,0x1D51C}, {0x1D51E,0x1D539}, {0x1D53B,0x1D53E}, {0x1D540,0x1D544}, {0x1D546,0x1D546},
  {0x1D54A,0x1D550}, {0x1D552,0x1D6A5}, {0x1D6A8,0x1D6C0}, {0x1D6C2,0x1D6DA}, {0x1D6DC,0x1D6FA},
  {0x1D6FC,0x1D714}, {0x1D716,0x1D734}, {0x1D736,0x1D74E}, {0x1D750,0x1D76E}, {0x1D770,0x1D788},
  {0x1D78A,0x1D7A8}, {0x1D7AA,0x1D7C2}, {0x1D7C4,0x1D7CB}, {0x1DF00,0x1DF09}, {0x1DF0B,0x1DF1E},
  {0x1E900,0x1E943}, {0x1F130,0x1F149}, {0x1F150,0x1F169}, {0x1F170,0x1F189},
};

#define N_ELEM(a) ((int)(sizeof(a)/sizeof(a[0])))

/* Python re \w (str patterns): Unicode letters and digits, and '_'
** (ext/util/pytext.c).  BAD_BYTE values are none. */
static int isWordCp(unsigned int cp){
  return cp<=0x10FFFF && profsumPyIsWord((int)cp);
}

/* Python re \d: Unicode decimal digits (ext/util/pytext.c).  BAD_BYTE
** values are none. */
static int isDigitCp(unsigned int cp){
  return cp<=0x10FFFF && profsumPyDigit((int)cp)>=0;
}

/* Python str.isspace() (= re \s): the 29 whitespace code points. */
static int isWsCp(unsigned int cp){
  return cp<=0x10FFFF && profsumPyIsSpace((int)cp);
}

/* Python str.lower() of one code point, when it is one code point (every
** case but U+0130, handled by the caller). */
static unsigned int lowerCp(unsigned int cp){
  int lo = 0, hi = N_ELEM(aLowerRun)-1, k = -1;
  if( cp<0x80 ) return (cp>='A' && cp<='Z') ? cp+32 : cp;
  while( lo<=hi ){                    /* last run with first <= cp */
    int mid = (lo+hi)/2;
    if( (unsigned int)aLowerRun[mid][0]<=cp ){ k = mid; lo = mid+1; }
    else hi = mid-1;
  }
  if( k>=0 && cp<=(unsigned int)aLowerRun[k][1]
   && (cp-(unsigned int)aLowerRun[k][0]) % (unsigned int)aLowerRun[k][3]==0 ){
    return (unsigned int)((int)cp + aLowerRun[k][2]);
  }
  return cp;
}

/* Invalid UTF-8 bytes decode to U+DC80+byte (as Python's surrogateescape
** would): not a word, digit or space character, never lower-cased. */
#define BAD_BYTE(b) (0xDC00u + (unsigned int)(b))

/* Decode the code point at z[i] (n bytes in z); returns its length. */
static int utf8At(const unsigned char *z, int n, int i, unsigned int *pCp){
  unsigned int c = z[i], cp;
  int len, k;
  if( c<0x80 ){ *pCp = c; return 1; }
  if( c>=0xC2 && c<=0xDF ){ len = 2; cp = c & 0x1F; }
  else if( c>=0xE0 && c<=0xEF ){ len = 3; cp = c & 0x0F; }
  else if( c>=0xF0 && c<=0xF4 ){ len = 4; cp = c & 0x07; }
  else { *pCp = BAD_BYTE(c); return 1; }
  if( i+len>n ){ *pCp = BAD_BYTE(c); return 1; }
  for(k=1; k<len; k++){
    unsigned int d = z[i+k];
    if( (d & 0xC0)!=0x80 ){ *pCp = BAD_BYTE(c); return 1; }
    cp = (cp<<6) | (d & 0x3F);
  }
  if( (len==3 && (cp<0x800 || (cp>=0xD800 && cp<=0xDFFF))) || (len==4 && (cp<0x10000 || cp>0x10FFFF)) ){
    *pCp = BAD_BYTE(c);
    return 1;
  }
  *pCp = cp;
  return len;
}

/* Start of the code point that ends just before byte i (i > 0), decoded
** consistently with utf8At(). */
static int utf8Before(const unsigned char *z, int n, int i, unsigned int *pCp){
  int s;
  for(s=i-1; s>0 && s>i-4 && (z[s] & 0xC0)==0x80; s--){}
  if( utf8At(z, n, s, pCp)==i-s ) return s;
  *pCp = BAD_BYTE(z[i-1]);
  return i-1;
}

/* Append code point cp as UTF-8 (BAD_BYTE values as the raw byte). */
static void appendCp(sqlite3_str *s, unsigned int cp){
  char b[4];
  if( cp>=0xDC80 && cp<=0xDCFF ){ b[0] = (char)(cp-0xDC00); sqlite3_str_append(s, b, 1); }
  else if( cp<0x80 ){ b[0] = (char)cp; sqlite3_str_append(s, b, 1); }
  else if( cp<0x800 ){
    b[0] = (char)(0xC0|(cp>>6)); b[1] = (char)(0x80|(cp&0x3F));
    sqlite3_str_append(s, b, 2);
  }else if( cp<0x10000 ){
    b[0] = (char)(0xE0|(cp>>12)); b[1] = (char)(0x80|((cp>>6)&0x3F)); b[2] = (char)(0x80|(cp&0x3F));
    sqlite3_str_append(s, b, 3);
  }else{
    b[0] = (char)(0xF0|(cp>>18)); b[1] = (char)(0x80|((cp>>12)&0x3F));
    b[2] = (char)(0x80|((cp>>6)&0x3F)); b[3] = (char)(0x80|(cp&0x3F));
    sqlite3_str_append(s, b, 4);
  }
}

/* Is cp in the sorted, disjoint runs a[0..n)?  (BAD_BYTE values, lone
** surrogates, are in none.) */
static int inRuns(const unsigned int (*a)[2], int n, unsigned int cp){
  int lo = 0, hi = n-1;
  while( lo<=hi ){
    int mid = (lo+hi)/2;
    if( cp<a[mid][0] ) hi = mid-1;
    else if( cp>a[mid][1] ) lo = mid+1;
    else return 1;
  }
  return 0;
}
#define IS_CASE_IGNORABLE(cp) inRuns(aCaseIgnorable, N_ELEM(aCaseIgnorable), (cp))
#define IS_CASED(cp)          inRuns(aCasedRun, N_ELEM(aCasedRun), (cp))

/* Does the capital sigma at u[i..i+l) (u of n bytes) lower-case to the
** final sigma (U+03C2) in Python?  When the first code point before it
** that is not Case_Ignorable is Cased, and the first after it that is
** not Case_Ignorable is not Cased or there is none (Unicode's
** Final_Sigma context); else it becomes U+03C3. */
static int finalSigma(const unsigned char *u, int n, int i, int l){
  unsigned int cp = 0;
  int j = i, k;
  for(;;){
    if( j<=0 ) return 0;
    j = utf8Before(u, n, j, &cp);
    if( !IS_CASE_IGNORABLE(cp) ) break;
  }
  if( !IS_CASED(cp) ) return 0;
  for(j=i+l; j<n; j+=k){
    k = utf8At(u, n, j, &cp);
    if( !IS_CASE_IGNORABLE(cp) ) return !IS_CASED(cp);
  }
  return 1;
}

/* Python str.lower() of z[0..n): a new string (sqlite3_malloc'd), 0 on OOM. */
static char *pyLower(const char *z, int n){
  const unsigned char *u = (const unsigned char*)z;
  sqlite3_str *s = sqlite3_str_new(0);
  int i = 0;
  while( i<n ){
    unsigned int cp;
    int l = utf8At(u, n, i, &cp);
    if( cp==0x130 ) sqlite3_str_appendall(s, "i\xCC\x87");
    else if( cp==0x3A3 ) appendCp(s, finalSigma(u, n, i, l) ? 0x3C2 : 0x3C3);
    else appendCp(s, lowerCp(cp));
    i += l;
  }
  return sqlite3_str_finish(s);   /* 0 for OOM, and for "" (see lowerOf) */
}

/* pyLower() that never confuses "" with OOM: *pOom is set on OOM. */
static char *lowerOf(const char *z, int n, int *pOom){
  char *r;
  if( n==0 ){ r = sqlite3_mprintf(""); }
  else r = pyLower(z, n);
  if( r==0 ) *pOom = 1;
  return r;
}

/* ================================================================== */
/* Target extraction (Python semantics)                                */
/* ================================================================== */

/* str.strip(): trim Unicode whitespace from z[*pi..*pe). */
static void stripWs(const char *z, int n, int *pi, int *pe){
  const unsigned char *u = (const unsigned char*)z;
  unsigned int cp;
  while( *pi<*pe ){
    int l = utf8At(u, *pe, *pi, &cp);
    if( !isWsCp(cp) ) break;
    *pi += l;
  }
  while( *pe>*pi ){
    int s = utf8Before(u, *pe, *pe, &cp);
    if( s<*pi || !isWsCp(cp) ) break;
    *pe = s;
  }
  (void)n;
}

/* str.strip("`\"'?.!, "). */
static int isStripChar(char c){
  return c=='`' || c=='"' || c=='\'' || c=='?' || c=='.' || c=='!' || c==',' || c==' ';
}
static void stripSet(const char *z, int *pi, int *pe){
  while( *pi<*pe && isStripChar(z[*pi]) ) (*pi)++;
  while( *pe>*pi && isStripChar(z[*pe-1]) ) (*pe)--;
}

/* Case-insensitive (re.IGNORECASE) match of the ASCII lower-case word zKw
** at z[i..e).  Returns the number of bytes matched, or -1. */
static int matchWordCI(const char *z, int i, int e, const char *zKw){
  int j = i;
  for(; *zKw; zKw++){
    unsigned char c;
    if( j>=e ) return -1;
    c = (unsigned char)z[j];
    if( c<0x80 ){
      if( c>='A' && c<='Z' ) c = (unsigned char)(c+32);
      if( c!=(unsigned char)*zKw ) return -1;
      j++;
    }else if( *zKw=='i' && c==0xC4 && j+1<e
           && ((unsigned char)z[j+1]==0xB0 || (unsigned char)z[j+1]==0xB1) ){
      j += 2;                          /* U+0130, U+0131 */
    }else{
      return -1;
    }
  }
  return j-i;
}

/* re.sub(r"^(op|operation)\s+", "", t, flags=re.IGNORECASE) on z[*pi..e). */
static void dropOpPrefix(const char *z, int *pi, int e){
  static const char *azKw[] = {"op", "operation"};
  int k;
  for(k=0; k<2; k++){
    int m = matchWordCI(z, *pi, e, azKw[k]);
    int j, nWs = 0;
    unsigned int cp;
    if( m<0 ) continue;
    j = *pi + m;
    while( j<e ){
      int l = utf8At((const unsigned char*)z, e, j, &cp);
      if( !isWsCp(cp) ) break;
      j += l;
      nWs++;
    }
    if( nWs>0 ){ *pi = j; return; }
  }
}

/*
** _normalize_target(): strip, strip the punctuation set, drop a leading
** "op "/"operation "; empty → 0 (None).  Returns a new string or 0; *pOom
** is set when 0 means out of memory.
*/
static char *normTarget(const char *z, int i, int e, int *pOom){
  char *r;
  stripWs(z, e, &i, &e);
  stripSet(z, &i, &e);
  dropOpPrefix(z, &i, e);
  if( e<=i ) return 0;
  r = sqlite3_mprintf("%.*s", e-i, z+i);
  if( r==0 ) *pOom = 1;
  return r;
}

/* Is there a \b word boundary at byte i of z[0..n)? (given that one side
** is known to be a word character, only the other side is tested) */
static int wordBefore(const char *z, int n, int i){
  unsigned int cp;
  if( i==0 ) return 0;
  utf8Before((const unsigned char*)z, n, i, &cp);
  return isWordCp(cp);
}
static int wordAt(const char *z, int n, int i){
  unsigned int cp;
  if( i>=n ) return 0;
  utf8At((const unsigned char*)z, n, i, &cp);
  return isWordCp(cp);
}

/*
** _extract_target_after_keyword(question, kw): the first whole-word,
** case-insensitive occurrence of kw; the rest of the question, stripped,
** normalized.  0 (None) when kw does not occur or nothing remains.
*/
static char *targetAfter(const char *z, int n, const char *zKw, int *pOom){
  int i = 0;
  while( i<n ){
    unsigned int cp;
    int m = matchWordCI(z, i, n, zKw);
    if( m>0 && !wordBefore(z, n, i) && !wordAt(z, n, i+m) ){
      int b = i+m, e = n;
      stripWs(z, n, &b, &e);
      stripSet(z, &b, &e);
      return normTarget(z, b, e, pOom);
    }
    i += utf8At((const unsigned char*)z, n, i, &cp);
  }
  return 0;
}

/* _extract_op_like_token(): the first \b[A-Za-z_][A-Za-z0-9_]*\.\d+\b,
** normalized; 0 when none. */
static char *opLikeToken(const char *z, int n, int *pOom){
  int i = 0;
  while( i<n ){
    unsigned int cp;
    char c = z[i];
    if( ((c>='A' && c<='Z') || (c>='a' && c<='z') || c=='_') && !wordBefore(z, n, i) ){
      int j = i+1;
      while( j<n && ((z[j]>='A' && z[j]<='Z') || (z[j]>='a' && z[j]<='z')
                     || (z[j]>='0' && z[j]<='9') || z[j]=='_') ) j++;
      if( j<n && z[j]=='.' ){
        int k = j+1, nDigit = 0;
        while( k<n ){
          int l = utf8At((const unsigned char*)z, n, k, &cp);
          if( !isDigitCp(cp) ) break;
          k += l;
          nDigit++;
        }
        /* \d+ is greedy; a shorter run ends before a digit (no \b), so
        ** only the longest run can be followed by a boundary. */
        if( nDigit>0 && !wordAt(z, n, k) ) return normTarget(z, i, k, pOom);
      }
    }
    i += utf8At((const unsigned char*)z, n, i, &cp);
  }
  return 0;
}

/* ================================================================== */
/* Answer building                                                     */
/* ================================================================== */

/* A list member of the document (0 when absent or not a list). */
static const JNode *docList(const JNode *pDoc, const char *zKey){
  const JNode *p = jGet(pDoc, zKey);
  return p && p->type==JT_ARRAY ? p : 0;
}
static int listLen(const JNode *p){ return p ? p->nChild : 0; }

/* A string member, or 0 when absent, not a string, or empty. */
static const char *strMember(const JNode *pObj, const char *zKey){
  const JNode *p = jGet(pObj, zKey);
  return p && p->type==JT_STRING && p->n>0 ? p->z : 0;
}

/* New object with the listed members of pSrc (absent → null). */
static JNode *pick(const JNode *pSrc, const char *const *azKey){
  JNode *o = jObj();
  for(; o && *azKey; azKey++) jSet(o, *azKey, jClone(jGet(pSrc, *azKey)));
  return o;
}

/* The first profsumTopKLen() items of a list, each picked. */
static JNode *pickList(const JNode *pList, int topK, const char *const *azKey){
  JNode *a = jArr();
  int i, n = profsumTopKLen(listLen(pList), topK);
  for(i=0; a && i<n; i++) jPush(a, pick(pList->a[i], azKey));
  return a;
}

static const char *const azComm[] = {"collective", "count", "total_duration", "avg_duration", 0};
static const char *const azContext[] = {"op_name", "region_path", "count", "total_gap_duration",
                                        "avg_gap_duration", 0};
static const char *const azCandidate[] = {"candidate_id", "title", "rationale", "evidence",
                                          "suggestions", 0};
static const char *const azGapNum[] = {"name", "count", "total_gap_duration", "max_gap_duration",
                                       "avg_gap_duration", 0};
static const char *const azHotOp[] = {"name", "category", "count", "exclusive_duration",
                                      "total_duration", "avg_duration", "shape_signature",
                                      "source_file", "tf_op_path", 0};

/* _hot_op_to_dict(): the eleven fields; legacy work_proxy_per_invocation;
** a missing or empty canonical_name is recomputed from the name. */
static JNode *hotOp(const JNode *h){
  JNode *o = pick(h, azHotOp);
  const JNode *f = jGetOr(h, "flop_proxy_per_invocation", "work_proxy_per_invocation");
  const char *zCanon = strMember(h, "canonical_name");
  jSet(o, "flop_proxy_per_invocation", jClone(f));
  if( zCanon ){
    jSet(o, "canonical_name", jStr(zCanon, -1));
  }else{
    const JNode *nm = jGet(h, "name");
    if( nm && nm->type==JT_STRING ){
      ProfsumSlice c = profsumCanonicalOp(nm->z, nm->n);
      jSet(o, "canonical_name", jStr(c.z ? c.z : "", c.z ? c.n : 0));
    }else{
      jSet(o, "canonical_name", jNull());
    }
  }
  return o;
}

/* A GapBeforeOp object; missing/empty payload_op and marker_op → name. */
static JNode *gapObj(const JNode *g){
  JNode *o = pick(g, azGapNum);
  const JNode *nm = jGet(g, "name");
  static const char *const az[] = {"payload_op", "marker_op"};
  int k;
  for(k=0; k<2; k++){
    const char *z = strMember(g, az[k]);
    jSet(o, az[k], z ? jStr(z, -1) : jClone(nm));
  }
  return o;
}

static JNode *topGaps(const JNode *pGaps, int topK){
  JNode *a = jArr();
  int i, n = profsumTopKLen(listLen(pGaps), topK);
  for(i=0; a && i<n; i++) jPush(a, gapObj(pGaps->a[i]));
  return a;
}

/* Does candidate zKey of gap g, lower-cased, equal (bSub==0) or contain
** (bSub) zLow?  payload_op and marker_op default to the name when missing
** or empty (the reader's leniency). */
static int gapCandidateHit(const JNode *g, const char *zKey, const char *zLow, int bSub, int *pOom){
  const JNode *v = jGet(g, zKey);
  char *zL;
  int hit;
  if( zKey[0]!='n' && (v==0 || v->type!=JT_STRING || v->n==0) ) v = jGet(g, "name");
  if( v==0 || v->type!=JT_STRING ) return 0;
  zL = lowerOf(v->z, v->n, pOom);
  if( zL==0 ) return 0;
  hit = bSub ? strstr(zL, zLow)!=0 : strcmp(zL, zLow)==0;
  sqlite3_free(zL);
  return hit;
}

/* Gap matching (§2, intent 4): exact candidate, else substring; 0 if none. */
static const JNode *findGap(const JNode *pGaps, const char *zTarget, int *pOom){
  static const char *const az[] = {"name", "payload_op", "marker_op"};
  char *zLow = lowerOf(zTarget, (int)strlen(zTarget), pOom);
  const JNode *hit = 0;
  int pass, i, k;
  if( zLow==0 ) return 0;
  for(pass=0; pass<2 && hit==0; pass++){
    for(i=0; i<listLen(pGaps) && hit==0; i++){
      for(k=0; k<3 && hit==0; k++){
        if( gapCandidateHit(pGaps->a[i], az[k], zLow, pass, pOom) ) hit = pGaps->a[i];
      }
    }
  }
  sqlite3_free(zLow);
  return hit;
}

/* _find_gap_contexts(): the context objects for target zTarget (0: none). */
static JNode *findContexts(const JNode *pDoc, const char *zTarget, int topK, int *pOom){
  const JNode *ctxs = docList(pDoc, "gap_region_contexts");
  JNode *a = jArr();
  char *zNorm, *zLow;
  int pass, i, n;
  if( a==0 ){ *pOom = 1; return 0; }
  if( listLen(ctxs)==0 ) return a;
  zNorm = zTarget ? normTarget(zTarget, 0, (int)strlen(zTarget), pOom) : 0;
  if( zNorm==0 ){
    jFree(a);
    return *pOom ? 0 : pickList(ctxs, topK, azContext);
  }
  zLow = lowerOf(zNorm, (int)strlen(zNorm), pOom);
  sqlite3_free(zNorm);
  if( zLow==0 ){ jFree(a); return 0; }
  for(pass=0; pass<2 && a->nChild==0; pass++){
    /* collect all hits, then slice (Python builds the list, then [:top_k]) */
    for(i=0; i<ctxs->nChild; i++){
      const char *zOp = 0;
      const JNode *nm = jGet(ctxs->a[i], "op_name");
      char *zL;
      int hit;
      if( nm && nm->type==JT_STRING ) zOp = nm->z;
      if( zOp==0 ) continue;
      zL = lowerOf(zOp, nm->n, pOom);
      if( zL==0 ) break;
      hit = pass ? strstr(zL, zLow)!=0 : strcmp(zL, zLow)==0;
      sqlite3_free(zL);
      if( hit ) jPush(a, pick(ctxs->a[i], azContext));
    }
  }
  sqlite3_free(zLow);
  /* [:top_k] */
  n = profsumTopKLen(a->nChild, topK);
  while( a->nChild>n ) jFree(a->a[--a->nChild]);
  return a;
}

/* Region rows with shares of their root's inclusive duration (intent 6). */
static JNode *regionRows(const JNode *pDoc, int topK){
  const JNode *rg = docList(pDoc, "hierarchical_regions");
  JNode *a = jArr();
  double fallback = 0.0;
  int i, k, n = profsumTopKLen(listLen(rg), topK);
  /* root totals: {depth-1 path: max(0, inclusive)}; fallback = max of them */
  for(k=0; k<listLen(rg); k++){
    const JNode *r = rg->a[k];
    if( jNum(jGet(r, "depth"))==1.0 ){
      double t = jNum(jGet(r, "inclusive_duration"));
      if( t<0 ) t = 0;
      if( t>fallback ) fallback = t;
    }
  }
  for(i=0; a && i<n; i++){
    const JNode *r = rg->a[i];
    const char *zPath = strMember(r, "path");
    const char *zSep = zPath ? strstr(zPath, "=>") : 0;
    int nRoot = zPath ? (zSep ? (int)(zSep-zPath) : (int)strlen(zPath)) : 0;
    double tot = fallback, incl = jNum(jGet(r, "inclusive_duration")), excl = jNum(jGet(r, "exclusive_duration"));
    JNode *o;
    for(k=0; k<listLen(rg); k++){
      const JNode *q = rg->a[k];
      const JNode *qp = jGet(q, "path");
      if( jNum(jGet(q, "depth"))==1.0 && qp && qp->type==JT_STRING
       && qp->n==nRoot && (nRoot==0 || memcmp(qp->z, zPath, (size_t)nRoot)==0) ){
        double t = jNum(jGet(q, "inclusive_duration"));
        tot = t<0 ? 0 : t;               /* the last one wins, as in a dict */
      }
    }
    o = jObj();
    jSet(o, "path", jClone(jGet(r, "path")));
    jSet(o, "depth", jClone(jGet(r, "depth")));
    jSet(o, "count", jClone(jGet(r, "count")));
    jSet(o, "inclusive_duration", jClone(jGet(r, "inclusive_duration")));
    jSet(o, "exclusive_duration", jClone(jGet(r, "exclusive_duration")));
    jSet(o, "inclusive_share_of_total", jReal(tot>0 ? incl/tot : 0.0));
    jSet(o, "exclusive_share_of_total", jReal(tot>0 ? excl/tot : 0.0));
    jPush(a, o);
  }
  return a;
}

/* See query.h. */
JNode *profsumQueryDoc(const JNode *pDoc, const char *zQ, int nQ, int topK){
  JNode *o = jObj();
  char *q;
  int oom = 0;
  if( nQ<0 ) nQ = (int)strlen(zQ);
  if( o==0 ) return 0;
  /* q = question.lower().strip(): stripping never changes a substring
  ** test of the (whitespace-free) keywords. */
  q = lowerOf(zQ, nQ, &oom);
  if( q==0 ){ jFree(o); return 0; }

#define HAS(s) (strstr(q, s)!=0)
  if( HAS("top") && HAS("op") ){
    const JNode *ho = docList(pDoc, "hot_ops");
    JNode *a = jArr();
    int i, n = profsumTopKLen(listLen(ho), topK);
    for(i=0; a && i<n; i++) jPush(a, hotOp(ho->a[i]));
    jSet(o, "query_type", jStr("top_ops", -1));
    jSet(o, "results", a);
  }else if( (HAS("comm") || HAS("collective"))
         && (HAS("compute") || HAS("dominating") || HAS("dominant") || HAS("worst")) ){
    const JNode *tb = jGet(pDoc, "time_breakdown");
    const JNode *cs = jGet(jGet(tb, "compute"), "share_of_total");
    const JNode *ms = jGet(jGet(tb, "communication"), "share_of_total");
    jSet(o, "query_type", jStr("compute_vs_communication", -1));
    jSet(o, "dominant", jStr(jNum(ms)>jNum(cs) ? "communication" : "compute", -1));
    jSet(o, "compute_share", jClone(cs));
    jSet(o, "communication_share", jClone(ms));
    jSet(o, "communication_breakdown", pickList(docList(pDoc, "communication_ops"), topK, azComm));
  }else if( HAS("collective") || HAS("communication") ){
    jSet(o, "query_type", jStr("collective_breakdown", -1));
    jSet(o, "results", pickList(docList(pDoc, "communication_ops"), topK, azComm));
  }else if( HAS("gap") && HAS("before") ){
    const JNode *gaps = docList(pDoc, "gap_before_ops");
    char *zT = targetAfter(zQ, nQ, "before", &oom);
    jSet(o, "query_type", jStr("pre_op_gap", -1));
    if( zT ){
      const JNode *m = findGap(gaps, zT, &oom);
      jSet(o, "target", jStr(zT, -1));
      jSet(o, "match", m ? gapObj(m) : jNull());
      jSet(o, "context", findContexts(pDoc, zT, topK, &oom));
      sqlite3_free(zT);
    }
    jSet(o, "top_gaps", topGaps(gaps, topK));
  }else if( HAS("context") && (HAS("gap") || HAS("op") || HAS("copy")) ){
    static const char *const azKw[] = {"for", "of", "op"};
    char *zT = 0;
    int k;
    for(k=0; k<3 && zT==0 && !oom; k++) zT = targetAfter(zQ, nQ, azKw[k], &oom);
    if( zT==0 && !oom ) zT = opLikeToken(zQ, nQ, &oom);
    jSet(o, "query_type", jStr("gap_region_context", -1));
    jSet(o, "target", zT ? jStr(zT, -1) : jNull());
    jSet(o, "results", findContexts(pDoc, zT, topK, &oom));
    sqlite3_free(zT);
  }else if( HAS("region") || HAS("hierarch") ){
    jSet(o, "query_type", jStr("hierarchical_regions", -1));
    jSet(o, "results", regionRows(pDoc, topK));
  }else if( HAS("memory-bound") || HAS("compute-bound") ){
    jSet(o, "query_type", jStr("bound_analysis", -1));
    jSet(o, "result", jStr("unsupported_from_trace_only", -1));
    jSet(o, "details", jStr("The current summary is derived from trace timings and does not include "
                            "hardware-counter evidence needed for memory-vs-compute bound "
                            "classification.", -1));
  }else if( HAS("improve") || HAS("regress") || HAS("compare") ){
    jSet(o, "query_type", jStr("comparison_hint", -1));
    jSet(o, "details", jStr("Use compare_profile_summaries(before, after) to measure "
                            "regressions/improvements.", -1));
  }else{
    const JNode *c = docList(pDoc, "optimization_candidates");
    jSet(o, "query_type", jStr("optimization_candidates", -1));
    jSet(o, "results", pickList(c, listLen(c), azCandidate));
  }
#undef HAS
  sqlite3_free(q);
  if( oom || jOom(o) ){ jFree(o); return 0; }
  return o;
}

/* ================================================================== */
/* SQL function                                                        */
/* ================================================================== */

/* See query.h. */
const char *profsumQueryKind(const char *zQ, int nQ, int *pbAsked){
  char *q;
  int oom = 0;
  const char *zKind;
  *pbAsked = 1;
  if( nQ<0 ) nQ = (int)strlen(zQ);
  q = lowerOf(zQ, nQ, &oom);
  if( q==0 ) return 0;
#define HAS(s) (strstr(q, s)!=0)
  /* the order of profsumQueryDoc's tests */
  if( HAS("top") && HAS("op") ) zKind = "top_ops";
  else if( (HAS("comm") || HAS("collective"))
        && (HAS("compute") || HAS("dominating") || HAS("dominant") || HAS("worst")) ) zKind = "compute_vs_communication";
  else if( HAS("collective") || HAS("communication") ) zKind = "collective_breakdown";
  else if( HAS("gap") && HAS("before") ) zKind = "pre_op_gap";
  else if( HAS("context") && (HAS("gap") || HAS("op") || HAS("copy")) ) zKind = "gap_region_context";
  else if( HAS("region") || HAS("hierarch") ) zKind = "hierarchical_regions";
  else if( HAS("memory-bound") || HAS("compute-bound") ) zKind = "bound_analysis";
  else if( HAS("improve") || HAS("regress") || HAS("compare") ) zKind = "comparison_hint";
  else{
    zKind = "optimization_candidates";
    /* the fallback answers any question; it is what was asked only when
    ** the question is about what to do */
    *pbAsked = HAS("next") || HAS("try") || HAS("candidate") || HAS("optimi") || HAS("suggest")
            || HAS("recommend") || HAS("bottleneck") || HAS("advice") || HAS("advise")
            || HAS("fix") || HAS("faster") || HAS("slow") || HAS("speed") || HAS("should");
  }
#undef HAS
  sqlite3_free(q);
  return zKind;
}

/* The rows of profsum_advice of trace id in zSchema as a JSON array (an
** empty one in a database made before the view); 0 with *pzErr on error,
** 0 without when out of memory. */
static JNode *adviceRows(sqlite3 *db, const char *zSchema, sqlite3_int64 id, char **pzErr){
  static const char *const azCol[] = {"rank", "advice_id", "source", "kpi", "title", "evidence",
                                      "fixes", "time_at_stake_us", "share_of_step"};
  sqlite3_stmt *p = 0;
  JNode *a = jArr();
  char *zSql = sqlite3_mprintf("SELECT rank, advice_id, source, kpi, title, evidence, fixes, "
                               "time_at_stake_us, share_of_step FROM \"%w\".profsum_advice "
                               "WHERE trace_id=?1 ORDER BY rank", zSchema);
  int rc;
  if( a==0 || zSql==0 ){ jFree(a); sqlite3_free(zSql); return 0; }
  rc = sqlite3_prepare_v2(db, zSql, -1, &p, 0);
  sqlite3_free(zSql);
  if( rc ){
    if( profsumDocNoSuchTable(db, rc) ) return a;
    if( rc!=SQLITE_NOMEM ) *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
    jFree(a);
    return 0;
  }
  sqlite3_bind_int64(p, 1, id);
  while( (rc = sqlite3_step(p))==SQLITE_ROW ){
    JNode *o = jObj();
    int c;
    for(c=0; o && c<9; c++){
      int t = sqlite3_column_type(p, c);
      JNode *v;
      if( t==SQLITE_NULL ) v = jNull();
      else if( c==5 || c==6 ) v = jParse((const char*)sqlite3_column_text(p, c), -1, 0);
      else if( t==SQLITE_INTEGER ) v = jInt(sqlite3_column_int64(p, c));
      else if( t==SQLITE_FLOAT ) v = jReal(sqlite3_column_double(p, c));
      else v = jStr((const char*)sqlite3_column_text(p, c), -1);
      jSet(o, azCol[c], v ? v : jNull());
    }
    jPush(a, o);
  }
  if( rc!=SQLITE_DONE ){
    if( rc!=SQLITE_NOMEM ) *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
    jFree(a);
    a = 0;
  }
  sqlite3_finalize(p);
  if( a && jOom(a) ){ jFree(a); return 0; }
  return a;
}

/* The document of trace pTrace in zSchema with its stored knobs; on error
** the error is set on ctx. */
static int queryDoc(sqlite3_context *ctx, const char *zFunc, sqlite3_value *pTrace,
                    const char *zSchema, ProfsumDoc **ppDoc, sqlite3_int64 *pId){
  return profsumDocIn(ctx, zFunc, pTrace, zSchema, 0, ppDoc, pId);
}

/* profsum_query_json(trace, question [, top_k | options_json [, options_json]])
** → the answer JSON.  options_json may name the "schema" (an attached
** database to read) and "advice": true, which adds profsum's own members
** (never in the reference's answer): "question_recognized" (false when the
** question matched no intent and the answer is the fallback) and
** "profsum_advice" (the rows of profsum_advice). */
static void queryJsonFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char *FN = "profsum_query_json";
  static const char *const azBool[] = {"advice", 0};
  sqlite3_int64 id, topK = PROFSUM_QUERY_TOP_K;
  ProfsumDoc *d = 0;
  JNode *ans;
  sqlite3_value *pOpts = 0;
  char *z, *zSchema = 0, *zErr = 0;
  int bAdvice = 0;
  if( argc==3 && sqlite3_value_type(argv[2])==SQLITE_TEXT
   && sqlite3_value_numeric_type(argv[2])==SQLITE_TEXT
   && strspn((const char*)sqlite3_value_text(argv[2]), " \t\r\n")
      < (size_t)sqlite3_value_bytes(argv[2])
   && ((const char*)sqlite3_value_text(argv[2]))[strspn((const char*)sqlite3_value_text(argv[2]), " \t\r\n")]=='{' ){
    pOpts = argv[2];                      /* (trace, question, options_json) */
  }else{
    if( argc>2 && profsumTopKArg(ctx, FN, argv[2], &topK) ) return;
    if( argc>3 ) pOpts = argv[3];
  }
  if( sqlite3_value_type(argv[1])!=SQLITE_TEXT ){   /* a number would answer as "anything else" */
    profsumCtxErr(ctx, "%s: the question must be text", FN);
    return;
  }
  if( pOpts && sqlite3_value_type(pOpts)!=SQLITE_NULL ){
    int rc = profsumSchemaOption(sqlite3_context_db_handle(ctx), (const char*)sqlite3_value_text(pOpts),
                                 azBool, &bAdvice, &zSchema, &zErr);
    if( rc ){
      if( zErr ) profsumCtxErr(ctx, "%s: %s", FN, zErr);
      else sqlite3_result_error_nomem(ctx);
      sqlite3_free(zErr);
      return;
    }
  }
  if( queryDoc(ctx, FN, argv[0], zSchema ? zSchema : "main", &d, &id) ){
    sqlite3_free(zSchema);
    return;
  }
  ans = profsumQueryDoc(profsumDocRoot(d), (const char*)sqlite3_value_text(argv[1]),
                        sqlite3_value_bytes(argv[1]), (int)topK);
  profsumDocFree(d);
  if( ans && bAdvice ){
    int bAsked;
    JNode *a;
    if( profsumQueryKind((const char*)sqlite3_value_text(argv[1]), sqlite3_value_bytes(argv[1]), &bAsked)==0 ){
      jFree(ans);
      ans = 0;
    }else{
      jSet(ans, "question_recognized", jBool(bAsked));
      a = adviceRows(sqlite3_context_db_handle(ctx), zSchema ? zSchema : "main", id, &zErr);
      if( a==0 ){
        jFree(ans);
        sqlite3_free(zSchema);
        if( zErr ){ profsumCtxErr(ctx, "%s: %s", FN, zErr); sqlite3_free(zErr); }
        else sqlite3_result_error_nomem(ctx);
        return;
      }
      jSet(ans, "profsum_advice", a);
    }
  }
  sqlite3_free(zSchema);
  z = ans ? jDump(ans) : 0;
  jFree(ans);
  if( z==0 ){ sqlite3_result_error_nomem(ctx); return; }
  sqlite3_result_text(ctx, z, -1, sqlite3_free);
}

/* See query.h. */
int profsumRegisterQuery(sqlite3 *db, char **pzErr){
  int rc;
  rc = profsumCreateFunctions(db, "profsum_query_json", 2, 4, SQLITE_UTF8|PROFSUM_FN_READS, queryJsonFunc);
  if( rc && pzErr ){
    *pzErr = sqlite3_mprintf("profsum: registering profsum_query_json failed: %s", sqlite3_errstr(rc));
  }
  return rc;
}
