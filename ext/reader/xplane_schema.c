/*
** xplane_schema.c — the tables of xplane_schema.h: the names of the XSpace
** message kinds and, per kind, the fields the decoder knows.
**
** Conventions: data only; no allocation.
*/
#include "profsum_int.h"
#include "xplane_schema.h"

/* See xplane_schema.h. */
const char *const profsumXpMsgNames[] = {
  "XSpace", "XPlane", "XLine", "XEvent", "XStat", "XEventMetadata",
  "XStatMetadata", "map entry"
};

/* See xplane_schema.h. */
#define XF(zName, wt)       { zName, wt, 1<<(wt) }
#define XF_PACKED(zName)    { zName, 0, 1<<0 | 1<<2 }
const XpFieldDesc profsumXpFields[][XP_FIELD_MAX] = {
  [XM_SPACE] = { [1] = XF("planes", 2), [2] = XF("errors", 2), [3] = XF("warnings", 2),
                 [4] = XF("hostnames", 2) },
  [XM_PLANE] = { [1] = XF("id", 0), [2] = XF("name", 2), [3] = XF("lines", 2),
                 [4] = XF("event_metadata", 2), [5] = XF("stat_metadata", 2),
                 [6] = XF("stats", 2) },
  [XM_LINE]  = { [1] = XF("id", 0), [2] = XF("name", 2), [3] = XF("timestamp_ns", 0),
                 [4] = XF("events", 2), [9] = XF("duration_ps", 0),
                 [10] = XF("display_id", 0), [11] = XF("display_name", 2) },
  [XM_EVENT] = { [1] = XF("metadata_id", 0), [2] = XF("offset_ps", 0),
                 [3] = XF("duration_ps", 0), [4] = XF("stats", 2),
                 [5] = XF("num_occurrences", 0) },
  [XM_STAT]  = { [1] = XF("metadata_id", 0), [2] = XF("double_value", 1),
                 [3] = XF("uint64_value", 0), [4] = XF("int64_value", 0),
                 [5] = XF("str_value", 2), [6] = XF("bytes_value", 2),
                 [7] = XF("ref_value", 0), [8] = XF("compressed_str_value", 2) },
  [XM_EMETA] = { [1] = XF("id", 0), [2] = XF("name", 2), [3] = XF("metadata", 2),
                 [4] = XF("display_name", 2), [5] = XF("stats", 2),
                 [6] = XF_PACKED("child_id") },
  [XM_SMETA] = { [1] = XF("id", 0), [2] = XF("name", 2), [3] = XF("description", 2) },
  [XM_ENTRY] = { [1] = XF("key", 0), [2] = XF("value", 2) },
};

/* See xplane_schema.h. */
const XpFieldDesc *profsumXpFieldDesc(int eMsg, int f){
  const XpFieldDesc *d = eMsg>=XM_SPACE && eMsg<=XM_ENTRY && f>0 && f<XP_FIELD_MAX
                         ? &profsumXpFields[eMsg][f] : 0;
  return d && d->zName ? d : 0;
}

/* See xplane_schema.h. */
const char *profsumXpFieldName(int eMsg, int f){
  const XpFieldDesc *d = profsumXpFieldDesc(eMsg, f);
  return d ? d->zName : 0;
}
