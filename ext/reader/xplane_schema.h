/*
** xplane_schema.h — the XSpace messages as the decoder (xplane_pb.c) knows
** them: the message kinds, their names, and each field's name and wire
** type (the schema of docs/xplane.md, tensorflow/tsl's xplane.proto).  The
** tables are in xplane_schema.c.
**
** Conventions: data only; no allocation.
*/
#ifndef PROFSUM_XPLANE_SCHEMA_H
#define PROFSUM_XPLANE_SCHEMA_H

/* Message kinds (messages, field names, diagnostics); XM_SPACE, the
** outermost, is kind 0 as pbwire.h wants. */
#define XM_SPACE  0
#define XM_PLANE  1
#define XM_LINE   2
#define XM_EVENT  3
#define XM_STAT   4
#define XM_EMETA  5
#define XM_SMETA  6
#define XM_ENTRY  7   /* a map entry: key = 1, value = 2 */

/* The name of each message kind, indexed by XM_* (PbwIn.azMsg). */
extern const char *const profsumXpMsgNames[];

/* A field of a message kind: its name, its wire type (0 varint, 1
** fixed64, 2 length-delimited) and mRead, the wire types the decoder
** reads it with (bit 1<<wt: its own, and 2 too for a repeated varint,
** which may come packed). */
typedef struct XpFieldDesc {
  const char *zName;
  unsigned char wt;
  unsigned char mRead;
} XpFieldDesc;

/* The fields of each message kind, indexed by XM_* and field number (a
** field without a name is not known; field numbers from XP_FIELD_MAX on
** are none); the decoder's field reader tests mRead here inline. */
#define XP_FIELD_MAX 12
extern const XpFieldDesc profsumXpFields[][XP_FIELD_MAX];

/* The description of field f of message kind eMsg, or 0 when it is not a
** known field. */
const XpFieldDesc *profsumXpFieldDesc(int eMsg, int f);
/* The name of field f of message kind eMsg, or 0 when it is not a known
** field (PbwIn.xFieldName). */
const char *profsumXpFieldName(int eMsg, int f);

#endif /* PROFSUM_XPLANE_SCHEMA_H */
