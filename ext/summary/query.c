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
** (U+0130 and U+0131 match 'i', in "operation").
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
/* Generated from Python 3.11.2 (re \w, str.lower), code points
** >= 0x80 (surrogates excluded):
**   aWordRange: maximal runs of cp with re.match(r'\w', chr(cp)) (re's
**     \d and \s: ext/util/pytext.c);
**   aLowerRun: the cp with len(chr(cp).lower())==1 and a different lower
**     case, merged into runs of equal delta ord(lower)-cp and stride 1 or 2
**     (U+0130, whose lower case is two code points, is handled in code). */
static const unsigned int aWordRange[][2] = {
  {0xAA,0xAA},{0xB2,0xB3},{0xB5,0xB5},{0xB9,0xBA},{0xBC,0xBE},{0xC0,0xD6},
  {0xD8,0xF6},{0xF8,0x2C1},{0x2C6,0x2D1},{0x2E0,0x2E4},{0x2EC,0x2EC},
  {0x2EE,0x2EE},{0x370,0x374},{0x376,0x377},{0x37A,0x37D},{0x37F,0x37F},
  {0x386,0x386},{0x388,0x38A},{0x38C,0x38C},{0x38E,0x3A1},{0x3A3,0x3F5},
  {0x3F7,0x481},{0x48A,0x52F},{0x531,0x556},{0x559,0x559},{0x560,0x588},
  {0x5D0,0x5EA},{0x5EF,0x5F2},{0x620,0x64A},{0x660,0x669},{0x66E,0x66F},
  {0x671,0x6D3},{0x6D5,0x6D5},{0x6E5,0x6E6},{0x6EE,0x6FC},{0x6FF,0x6FF},
  {0x710,0x710},{0x712,0x72F},{0x74D,0x7A5},{0x7B1,0x7B1},{0x7C0,0x7EA},
  {0x7F4,0x7F5},{0x7FA,0x7FA},{0x800,0x815},{0x81A,0x81A},{0x824,0x824},
  {0x828,0x828},{0x840,0x858},{0x860,0x86A},{0x870,0x887},{0x889,0x88E},
  {0x8A0,0x8C9},{0x904,0x939},{0x93D,0x93D},{0x950,0x950},{0x958,0x961},
  {0x966,0x96F},{0x971,0x980},{0x985,0x98C},{0x98F,0x990},{0x993,0x9A8},
  {0x9AA,0x9B0},{0x9B2,0x9B2},{0x9B6,0x9B9},{0x9BD,0x9BD},{0x9CE,0x9CE},
  {0x9DC,0x9DD},{0x9DF,0x9E1},{0x9E6,0x9F1},{0x9F4,0x9F9},{0x9FC,0x9FC},
  {0xA05,0xA0A},{0xA0F,0xA10},{0xA13,0xA28},{0xA2A,0xA30},{0xA32,0xA33},
  {0xA35,0xA36},{0xA38,0xA39},{0xA59,0xA5C},{0xA5E,0xA5E},{0xA66,0xA6F},
  {0xA72,0xA74},{0xA85,0xA8D},{0xA8F,0xA91},{0xA93,0xAA8},{0xAAA,0xAB0},
  {0xAB2,0xAB3},{0xAB5,0xAB9},{0xABD,0xABD},{0xAD0,0xAD0},{0xAE0,0xAE1},
  {0xAE6,0xAEF},{0xAF9,0xAF9},{0xB05,0xB0C},{0xB0F,0xB10},{0xB13,0xB28},
  {0xB2A,0xB30},{0xB32,0xB33},{0xB35,0xB39},{0xB3D,0xB3D},{0xB5C,0xB5D},
  {0xB5F,0xB61},{0xB66,0xB6F},{0xB71,0xB77},{0xB83,0xB83},{0xB85,0xB8A},
  {0xB8E,0xB90},{0xB92,0xB95},{0xB99,0xB9A},{0xB9C,0xB9C},{0xB9E,0xB9F},
  {0xBA3,0xBA4},{0xBA8,0xBAA},{0xBAE,0xBB9},{0xBD0,0xBD0},{0xBE6,0xBF2},
  {0xC05,0xC0C},{0xC0E,0xC10},{0xC12,0xC28},{0xC2A,0xC39},{0xC3D,0xC3D},
  {0xC58,0xC5A},{0xC5D,0xC5D},{0xC60,0xC61},{0xC66,0xC6F},{0xC78,0xC7E},
  {0xC80,0xC80},{0xC85,0xC8C},{0xC8E,0xC90},{0xC92,0xCA8},{0xCAA,0xCB3},
  {0xCB5,0xCB9},{0xCBD,0xCBD},{0xCDD,0xCDE},{0xCE0,0xCE1},{0xCE6,0xCEF},
  {0xCF1,0xCF2},{0xD04,0xD0C},{0xD0E,0xD10},{0xD12,0xD3A},{0xD3D,0xD3D},
  {0xD4E,0xD4E},{0xD54,0xD56},{0xD58,0xD61},{0xD66,0xD78},{0xD7A,0xD7F},
  {0xD85,0xD96},{0xD9A,0xDB1},{0xDB3,0xDBB},{0xDBD,0xDBD},{0xDC0,0xDC6},
  {0xDE6,0xDEF},{0xE01,0xE30},{0xE32,0xE33},{0xE40,0xE46},{0xE50,0xE59},
  {0xE81,0xE82},{0xE84,0xE84},{0xE86,0xE8A},{0xE8C,0xEA3},{0xEA5,0xEA5},
  {0xEA7,0xEB0},{0xEB2,0xEB3},{0xEBD,0xEBD},{0xEC0,0xEC4},{0xEC6,0xEC6},
  {0xED0,0xED9},{0xEDC,0xEDF},{0xF00,0xF00},{0xF20,0xF33},{0xF40,0xF47},
  {0xF49,0xF6C},{0xF88,0xF8C},{0x1000,0x102A},{0x103F,0x1049},{0x1050,0x1055},
  {0x105A,0x105D},{0x1061,0x1061},{0x1065,0x1066},{0x106E,0x1070},
  {0x1075,0x1081},{0x108E,0x108E},{0x1090,0x1099},{0x10A0,0x10C5},
  {0x10C7,0x10C7},{0x10CD,0x10CD},{0x10D0,0x10FA},{0x10FC,0x1248},
  {0x124A,0x124D},{0x1250,0x1256},{0x1258,0x1258},{0x125A,0x125D},
  {0x1260,0x1288},{0x128A,0x128D},{0x1290,0x12B0},{0x12B2,0x12B5},
  {0x12B8,0x12BE},{0x12C0,0x12C0},{0x12C2,0x12C5},{0x12C8,0x12D6},
  {0x12D8,0x1310},{0x1312,0x1315},{0x1318,0x135A},{0x1369,0x137C},
  {0x1380,0x138F},{0x13A0,0x13F5},{0x13F8,0x13FD},{0x1401,0x166C},
  {0x166F,0x167F},{0x1681,0x169A},{0x16A0,0x16EA},{0x16EE,0x16F8},
  {0x1700,0x1711},{0x171F,0x1731},{0x1740,0x1751},{0x1760,0x176C},
  {0x176E,0x1770},{0x1780,0x17B3},{0x17D7,0x17D7},{0x17DC,0x17DC},
  {0x17E0,0x17E9},{0x17F0,0x17F9},{0x1810,0x1819},{0x1820,0x1878},
  {0x1880,0x1884},{0x1887,0x18A8},{0x18AA,0x18AA},{0x18B0,0x18F5},
  {0x1900,0x191E},{0x1946,0x196D},{0x1970,0x1974},{0x1980,0x19AB},
  {0x19B0,0x19C9},{0x19D0,0x19DA},{0x1A00,0x1A16},{0x1A20,0x1A54},
  {0x1A80,0x1A89},{0x1A90,0x1A99},{0x1AA7,0x1AA7},{0x1B05,0x1B33},
  {0x1B45,0x1B4C},{0x1B50,0x1B59},{0x1B83,0x1BA0},{0x1BAE,0x1BE5},
  {0x1C00,0x1C23},{0x1C40,0x1C49},{0x1C4D,0x1C7D},{0x1C80,0x1C88},
  {0x1C90,0x1CBA},{0x1CBD,0x1CBF},{0x1CE9,0x1CEC},{0x1CEE,0x1CF3},
  {0x1CF5,0x1CF6},{0x1CFA,0x1CFA},{0x1D00,0x1DBF},{0x1E00,0x1F15},
  {0x1F18,0x1F1D},{0x1F20,0x1F45},{0x1F48,0x1F4D},{0x1F50,0x1F57},
  {0x1F59,0x1F59},{0x1F5B,0x1F5B},{0x1F5D,0x1F5D},{0x1F5F,0x1F7D},
  {0x1F80,0x1FB4},{0x1FB6,0x1FBC},{0x1FBE,0x1FBE},{0x1FC2,0x1FC4},
  {0x1FC6,0x1FCC},{0x1FD0,0x1FD3},{0x1FD6,0x1FDB},{0x1FE0,0x1FEC},
  {0x1FF2,0x1FF4},{0x1FF6,0x1FFC},{0x2070,0x2071},{0x2074,0x2079},
  {0x207F,0x2089},{0x2090,0x209C},{0x2102,0x2102},{0x2107,0x2107},
  {0x210A,0x2113},{0x2115,0x2115},{0x2119,0x211D},{0x2124,0x2124},
  {0x2126,0x2126},{0x2128,0x2128},{0x212A,0x212D},{0x212F,0x2139},
  {0x213C,0x213F},{0x2145,0x2149},{0x214E,0x214E},{0x2150,0x2189},
  {0x2460,0x249B},{0x24EA,0x24FF},{0x2776,0x2793},{0x2C00,0x2CE4},
  {0x2CEB,0x2CEE},{0x2CF2,0x2CF3},{0x2CFD,0x2CFD},{0x2D00,0x2D25},
  {0x2D27,0x2D27},{0x2D2D,0x2D2D},{0x2D30,0x2D67},{0x2D6F,0x2D6F},
  {0x2D80,0x2D96},{0x2DA0,0x2DA6},{0x2DA8,0x2DAE},{0x2DB0,0x2DB6},
  {0x2DB8,0x2DBE},{0x2DC0,0x2DC6},{0x2DC8,0x2DCE},{0x2DD0,0x2DD6},
  {0x2DD8,0x2DDE},{0x2E2F,0x2E2F},{0x3005,0x3007},{0x3021,0x3029},
  {0x3031,0x3035},{0x3038,0x303C},{0x3041,0x3096},{0x309D,0x309F},
  {0x30A1,0x30FA},{0x30FC,0x30FF},{0x3105,0x312F},{0x3131,0x318E},
  {0x3192,0x3195},{0x31A0,0x31BF},{0x31F0,0x31FF},{0x3220,0x3229},
  {0x3248,0x324F},{0x3251,0x325F},{0x3280,0x3289},{0x32B1,0x32BF},
  {0x3400,0x4DBF},{0x4E00,0xA48C},{0xA4D0,0xA4FD},{0xA500,0xA60C},
  {0xA610,0xA62B},{0xA640,0xA66E},{0xA67F,0xA69D},{0xA6A0,0xA6EF},
  {0xA717,0xA71F},{0xA722,0xA788},{0xA78B,0xA7CA},{0xA7D0,0xA7D1},
  {0xA7D3,0xA7D3},{0xA7D5,0xA7D9},{0xA7F2,0xA801},{0xA803,0xA805},
  {0xA807,0xA80A},{0xA80C,0xA822},{0xA830,0xA835},{0xA840,0xA873},
  {0xA882,0xA8B3},{0xA8D0,0xA8D9},{0xA8F2,0xA8F7},{0xA8FB,0xA8FB},
  {0xA8FD,0xA8FE},{0xA900,0xA925},{0xA930,0xA946},{0xA960,0xA97C},
  {0xA984,0xA9B2},{0xA9CF,0xA9D9},{0xA9E0,0xA9E4},{0xA9E6,0xA9FE},
  {0xAA00,0xAA28},{0xAA40,0xAA42},{0xAA44,0xAA4B},{0xAA50,0xAA59},
  {0xAA60,0xAA76},{0xAA7A,0xAA7A},{0xAA7E,0xAAAF},{0xAAB1,0xAAB1},
  {0xAAB5,0xAAB6},{0xAAB9,0xAABD},{0xAAC0,0xAAC0},{0xAAC2,0xAAC2},
  {0xAADB,0xAADD},{0xAAE0,0xAAEA},{0xAAF2,0xAAF4},{0xAB01,0xAB06},
  {0xAB09,0xAB0E},{0xAB11,0xAB16},{0xAB20,0xAB26},{0xAB28,0xAB2E},
  {0xAB30,0xAB5A},{0xAB5C,0xAB69},{0xAB70,0xABE2},{0xABF0,0xABF9},
  {0xAC00,0xD7A3},{0xD7B0,0xD7C6},{0xD7CB,0xD7FB},{0xF900,0xFA6D},
  {0xFA70,0xFAD9},{0xFB00,0xFB06},{0xFB13,0xFB17},{0xFB1D,0xFB1D},
  {0xFB1F,0xFB28},{0xFB2A,0xFB36},{0xFB38,0xFB3C},{0xFB3E,0xFB3E},
  {0xFB40,0xFB41},{0xFB43,0xFB44},{0xFB46,0xFBB1},{0xFBD3,0xFD3D},
  {0xFD50,0xFD8F},{0xFD92,0xFDC7},{0xFDF0,0xFDFB},{0xFE70,0xFE74},
  {0xFE76,0xFEFC},{0xFF10,0xFF19},{0xFF21,0xFF3A},{0xFF41,0xFF5A},
  {0xFF66,0xFFBE},{0xFFC2,0xFFC7},{0xFFCA,0xFFCF},{0xFFD2,0xFFD7},
  {0xFFDA,0xFFDC},{0x10000,0x1000B},{0x1000D,0x10026},{0x10028,0x1003A},
  {0x1003C,0x1003D},{0x1003F,0x1004D},{0x10050,0x1005D},{0x10080,0x100FA},
  {0x10107,0x10133},{0x10140,0x10178},{0x1018A,0x1018B},{0x10280,0x1029C},
  {0x102A0,0x102D0},{0x102E1,0x102FB},{0x10300,0x10323},{0x1032D,0x1034A},
  {0x10350,0x10375},{0x10380,0x1039D},{0x103A0,0x103C3},{0x103C8,0x103CF},
  {0x103D1,0x103D5},{0x10400,0x1049D},{0x104A0,0x104A9},{0x104B0,0x104D3},
  {0x104D8,0x104FB},{0x10500,0x10527},{0x10530,0x10563},{0x10570,0x1057A},
  {0x1057C,0x1058A},{0x1058C,0x10592},{0x10594,0x10595},{0x10597,0x105A1},
  {0x105A3,0x105B1},{0x105B3,0x105B9},{0x105BB,0x105BC},{0x10600,0x10736},
  {0x10740,0x10755},{0x10760,0x10767},{0x10780,0x10785},{0x10787,0x107B0},
  {0x107B2,0x107BA},{0x10800,0x10805},{0x10808,0x10808},{0x1080A,0x10835},
  {0x10837,0x10838},{0x1083C,0x1083C},{0x1083F,0x10855},{0x10858,0x10876},
  {0x10879,0x1089E},{0x108A7,0x108AF},{0x108E0,0x108F2},{0x108F4,0x108F5},
  {0x108FB,0x1091B},{0x10920,0x10939},{0x10980,0x109B7},{0x109BC,0x109CF},
  {0x109D2,0x10A00},{0x10A10,0x10A13},{0x10A15,0x10A17},{0x10A19,0x10A35},
  {0x10A40,0x10A48},{0x10A60,0x10A7E},{0x10A80,0x10A9F},{0x10AC0,0x10AC7},
  {0x10AC9,0x10AE4},{0x10AEB,0x10AEF},{0x10B00,0x10B35},{0x10B40,0x10B55},
  {0x10B58,0x10B72},{0x10B78,0x10B91},{0x10BA9,0x10BAF},{0x10C00,0x10C48},
  {0x10C80,0x10CB2},{0x10CC0,0x10CF2},{0x10CFA,0x10D23},{0x10D30,0x10D39},
  {0x10E60,0x10E7E},{0x10E80,0x10EA9},{0x10EB0,0x10EB1},{0x10F00,0x10F27},
  {0x10F30,0x10F45},{0x10F51,0x10F54},{0x10F70,0x10F81},{0x10FB0,0x10FCB},
  {0x10FE0,0x10FF6},{0x11003,0x11037},{0x11052,0x1106F},{0x11071,0x11072},
  {0x11075,0x11075},{0x11083,0x110AF},{0x110D0,0x110E8},{0x110F0,0x110F9},
  {0x11103,0x11126},{0x11136,0x1113F},{0x11144,0x11144},{0x11147,0x11147},
  {0x11150,0x11172},{0x11176,0x11176},{0x11183,0x111B2},{0x111C1,0x111C4},
  {0x111D0,0x111DA},{0x111DC,0x111DC},{0x111E1,0x111F4},{0x11200,0x11211},
  {0x11213,0x1122B},{0x11280,0x11286},{0x11288,0x11288},{0x1128A,0x1128D},
  {0x1128F,0x1129D},{0x1129F,0x112A8},{0x112B0,0x112DE},{0x112F0,0x112F9},
  {0x11305,0x1130C},{0x1130F,0x11310},{0x11313,0x11328},{0x1132A,0x11330},
  {0x11332,0x11333},{0x11335,0x11339},{0x1133D,0x1133D},{0x11350,0x11350},
  {0x1135D,0x11361},{0x11400,0x11434},{0x11447,0x1144A},{0x11450,0x11459},
  {0x1145F,0x11461},{0x11480,0x114AF},{0x114C4,0x114C5},{0x114C7,0x114C7},
  {0x114D0,0x114D9},{0x11580,0x115AE},{0x115D8,0x115DB},{0x11600,0x1162F},
  {0x11644,0x11644},{0x11650,0x11659},{0x11680,0x116AA},{0x116B8,0x116B8},
  {0x116C0,0x116C9},{0x11700,0x1171A},{0x11730,0x1173B},{0x11740,0x11746},
  {0x11800,0x1182B},{0x118A0,0x118F2},{0x118FF,0x11906},{0x11909,0x11909},
  {0x1190C,0x11913},{0x11915,0x11916},{0x11918,0x1192F},{0x1193F,0x1193F},
  {0x11941,0x11941},{0x11950,0x11959},{0x119A0,0x119A7},{0x119AA,0x119D0},
  {0x119E1,0x119E1},{0x119E3,0x119E3},{0x11A00,0x11A00},{0x11A0B,0x11A32},
  {0x11A3A,0x11A3A},{0x11A50,0x11A50},{0x11A5C,0x11A89},{0x11A9D,0x11A9D},
  {0x11AB0,0x11AF8},{0x11C00,0x11C08},{0x11C0A,0x11C2E},{0x11C40,0x11C40},
  {0x11C50,0x11C6C},{0x11C72,0x11C8F},{0x11D00,0x11D06},{0x11D08,0x11D09},
  {0x11D0B,0x11D30},{0x11D46,0x11D46},{0x11D50,0x11D59},{0x11D60,0x11D65},
  {0x11D67,0x11D68},{0x11D6A,0x11D89},{0x11D98,0x11D98},{0x11DA0,0x11DA9},
  {0x11EE0,0x11EF2},{0x11FB0,0x11FB0},{0x11FC0,0x11FD4},{0x12000,0x12399},
  {0x12400,0x1246E},{0x12480,0x12543},{0x12F90,0x12FF0},{0x13000,0x1342E},
  {0x14400,0x14646},{0x16800,0x16A38},{0x16A40,0x16A5E},{0x16A60,0x16A69},
  {0x16A70,0x16ABE},{0x16AC0,0x16AC9},{0x16AD0,0x16AED},{0x16B00,0x16B2F},
  {0x16B40,0x16B43},{0x16B50,0x16B59},{0x16B5B,0x16B61},{0x16B63,0x16B77},
  {0x16B7D,0x16B8F},{0x16E40,0x16E96},{0x16F00,0x16F4A},{0x16F50,0x16F50},
  {0x16F93,0x16F9F},{0x16FE0,0x16FE1},{0x16FE3,0x16FE3},{0x17000,0x187F7},
  {0x18800,0x18CD5},{0x18D00,0x18D08},{0x1AFF0,0x1AFF3},{0x1AFF5,0x1AFFB},
  {0x1AFFD,0x1AFFE},{0x1B000,0x1B122},{0x1B150,0x1B152},{0x1B164,0x1B167},
  {0x1B170,0x1B2FB},{0x1BC00,0x1BC6A},{0x1BC70,0x1BC7C},{0x1BC80,0x1BC88},
  {0x1BC90,0x1BC99},{0x1D2E0,0x1D2F3},{0x1D360,0x1D378},{0x1D400,0x1D454},
  {0x1D456,0x1D49C},{0x1D49E,0x1D49F},{0x1D4A2,0x1D4A2},{0x1D4A5,0x1D4A6},
  {0x1D4A9,0x1D4AC},{0x1D4AE,0x1D4B9},{0x1D4BB,0x1D4BB},{0x1D4BD,0x1D4C3},
  {0x1D4C5,0x1D505},{0x1D507,0x1D50A},{0x1D50D,0x1D514},{0x1D516,0x1D51C},
  {0x1D51E,0x1D539},{0x1D53B,0x1D53E},{0x1D540,0x1D544},{0x1D546,0x1D546},
  {0x1D54A,0x1D550},{0x1D552,0x1D6A5},{0x1D6A8,0x1D6C0},{0x1D6C2,0x1D6DA},
  {0x1D6DC,0x1D6FA},{0x1D6FC,0x1D714},{0x1D716,0x1D734},{0x1D736,0x1D74E},
  {0x1D750,0x1D76E},{0x1D770,0x1D788},{0x1D78A,0x1D7A8},{0x1D7AA,0x1D7C2},
  {0x1D7C4,0x1D7CB},{0x1D7CE,0x1D7FF},{0x1DF00,0x1DF1E},{0x1E100,0x1E12C},
  {0x1E137,0x1E13D},{0x1E140,0x1E149},{0x1E14E,0x1E14E},{0x1E290,0x1E2AD},
  {0x1E2C0,0x1E2EB},{0x1E2F0,0x1E2F9},{0x1E7E0,0x1E7E6},{0x1E7E8,0x1E7EB},
  {0x1E7ED,0x1E7EE},{0x1E7F0,0x1E7FE},{0x1E800,0x1E8C4},{0x1E8C7,0x1E8CF},
  {0x1E900,0x1E943},{0x1E94B,0x1E94B},{0x1E950,0x1E959},{0x1EC71,0x1ECAB},
  {0x1ECAD,0x1ECAF},{0x1ECB1,0x1ECB4},{0x1ED01,0x1ED2D},{0x1ED2F,0x1ED3D},
  {0x1EE00,0x1EE03},{0x1EE05,0x1EE1F},{0x1EE21,0x1EE22},{0x1EE24,0x1EE24},
  {0x1EE27,0x1EE27},{0x1EE29,0x1EE32},{0x1EE34,0x1EE37},{0x1EE39,0x1EE39},
  {0x1EE3B,0x1EE3B},{0x1EE42,0x1EE42},{0x1EE47,0x1EE47},{0x1EE49,0x1EE49},
  {0x1EE4B,0x1EE4B},{0x1EE4D,0x1EE4F},{0x1EE51,0x1EE52},{0x1EE54,0x1EE54},
  {0x1EE57,0x1EE57},{0x1EE59,0x1EE59},{0x1EE5B,0x1EE5B},{0x1EE5D,0x1EE5D},
  {0x1EE5F,0x1EE5F},{0x1EE61,0x1EE62},{0x1EE64,0x1EE64},{0x1EE67,0x1EE6A},
  {0x1EE6C,0x1EE72},{0x1EE74,0x1EE77},{0x1EE79,0x1EE7C},{0x1EE7E,0x1EE7E},
  {0x1EE80,0x1EE89},{0x1EE8B,0x1EE9B},{0x1EEA1,0x1EEA3},{0x1EEA5,0x1EEA9},
  {0x1EEAB,0x1EEBB},{0x1F100,0x1F10C},{0x1FBF0,0x1FBF9},{0x20000,0x2A6DF},
  {0x2A700,0x2B738},{0x2B740,0x2B81D},{0x2B820,0x2CEA1},{0x2CEB0,0x2EBE0},
  {0x2F800,0x2FA1D},{0x30000,0x3134A},
};

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

/* Binary search of cp in a sorted table of disjoint [first, last] ranges. */
static int inRanges(const unsigned int (*a)[2], int n, unsigned int cp){
  int lo = 0, hi = n-1;
  while( lo<=hi ){
    int mid = (lo+hi)/2;
    if( cp<a[mid][0] ) hi = mid-1;
    else if( cp>a[mid][1] ) lo = mid+1;
    else return 1;
  }
  return 0;
}

#define N_ELEM(a) ((int)(sizeof(a)/sizeof(a[0])))

/* Python re \w (str patterns): Unicode letters and digits, and '_'. */
static int isWordCp(unsigned int cp){
  if( cp<0x80 ){
    return (cp>='a' && cp<='z') || (cp>='A' && cp<='Z') || (cp>='0' && cp<='9') || cp=='_';
  }
  return inRanges(aWordRange, N_ELEM(aWordRange), cp);
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

/* Python str.lower() of z[0..n): a new string (sqlite3_malloc'd), 0 on OOM. */
static char *pyLower(const char *z, int n){
  const unsigned char *u = (const unsigned char*)z;
  sqlite3_str *s = sqlite3_str_new(0);
  int i = 0;
  while( i<n ){
    unsigned int cp;
    int l = utf8At(u, n, i, &cp);
    if( cp==0x130 ) sqlite3_str_appendall(s, "i\xCC\x87");
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

/* Python's len(list[:topK]). */
static int sliceLen(int n, int topK){
  if( topK>=0 ) return topK<n ? topK : n;
  return n+topK>0 ? n+topK : 0;
}

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

/* The first sliceLen() items of a list, each picked. */
static JNode *pickList(const JNode *pList, int topK, const char *const *azKey){
  JNode *a = jArr();
  int i, n = sliceLen(listLen(pList), topK);
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
  int i, n = sliceLen(listLen(pGaps), topK);
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
  n = sliceLen(a->nChild, topK);
  while( a->nChild>n ) jFree(a->a[--a->nChild]);
  return a;
}

/* Region rows with shares of their root's inclusive duration (intent 6). */
static JNode *regionRows(const JNode *pDoc, int topK){
  const JNode *rg = docList(pDoc, "hierarchical_regions");
  JNode *a = jArr();
  double fallback = 0.0;
  int i, k, n = sliceLen(listLen(rg), topK);
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
    int i, n = sliceLen(listLen(ho), topK);
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
  rc = profsumCreateFunctions(db, "profsum_query_json", 2, 4, SQLITE_UTF8, queryJsonFunc);
  if( rc && pzErr ){
    *pzErr = sqlite3_mprintf("profsum: registering profsum_query_json failed: %s", sqlite3_errstr(rc));
  }
  return rc;
}
