/* Bounded on-disk spool of one agent session's encoded frames.
 *   DIR/<agent_id>-<boot_id hex>/seg-%08u.spl
 *   DIR/<agent_id>-<boot_id hex>/hello.frame, collector   (spool_set_meta)
 * Each segment is a plain concatenation of wire frames (varint length +
 * Envelope), appended with write(2); a new segment starts at ~256 KiB. The
 * memory index holds one entry per segment (first/last seq, bytes, records),
 * never one per record. Acks delete whole segments; the size cap deletes the
 * oldest segments and counts the records lost. Functions return 0 or -errno.
 *
 * The running agent holds an exclusive flock(2) on its session directory: a
 * directory with a saved Hello and no lock is an orphan, records a run left
 * behind when it ended; a later process adopts it (spool_adopt: takes the
 * lock, rebuilds the index from the segment files) to send them in the
 * orphan's own session (agent/spool_orphans.c). */
#ifndef AGENT_SPOOL_H
#define AGENT_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SPOOL_SEGMENT_BYTES (256u * 1024u)

struct spool_segment {
	uint32_t id;
	uint64_t first_seq;
	uint64_t last_seq;
	uint64_t bytes;
	uint64_t records;
};

struct spool;

/* Create the session directory under base_dir (created if missing) and lock it.
 * seg_bytes 0 = SPOOL_SEGMENT_BYTES. err gets a user-facing reason. */
int spool_open(struct spool **out, const char *base_dir, const char *agent_id, uint64_t boot_id,
	       uint64_t max_bytes, size_t seg_bytes, char *err, size_t errlen);
/* Save the session's Hello frame and collector HOST:PORT beside its segments,
 * so that another process can send them if this one ends with records left. */
int spool_set_meta(struct spool *s, const uint8_t *hello, size_t len, const char *collector);
/* Adopt the orphaned session directory dir: -ENOENT no saved Hello (not an
 * orphan: made by an agent without spool_set_meta), -EBUSY its agent still
 * runs (it holds the lock), else 0 and a spool of the records left there (no
 * cap; appending is not for adopted spools). err gets a reason. */
int spool_adopt(struct spool **out, const char *dir, char *err, size_t errlen);
/* The saved Hello frame (malloc'd) and collector of a session directory,
 * without adopting it (they never change once saved). 0, -ENOENT or -errno. */
int spool_read_meta(const char *dir, uint8_t **hello, size_t *len, char *collector, size_t clen);
/* The saved Hello frame and collector of an adopted spool (NULL / "" if none). */
const uint8_t *spool_hello(const struct spool *s, size_t *len);
const char *spool_collector(const struct spool *s);
/* What a session directory is, without adopting it (for `agent spool ls`). */
enum spool_state { SPOOL_LIVE, SPOOL_ORPHAN, SPOOL_NO_HELLO };
enum spool_state spool_probe(const char *dir);
/* Would appending len bytes now delete records to stay under the cap? */
bool spool_would_drop(const struct spool *s, size_t len);
/* Append one frame whose envelope has this seq (seqs must increase). */
int spool_append(struct spool *s, uint64_t seq, const uint8_t *frame, size_t len);
/* The collector committed everything <= seq: delete segments wholly covered. */
void spool_ack(struct spool *s, uint64_t seq);

uint64_t spool_bytes(const struct spool *s);     /* bytes held on disk */
uint64_t spool_records(const struct spool *s);   /* records held (not yet deleted by an ack) */
uint64_t spool_dropped(const struct spool *s);   /* records deleted by the cap, so far */
uint64_t spool_last_seq(const struct spool *s);  /* highest seq appended, 0 if none */
uint64_t spool_acked(const struct spool *s);     /* highest seq acked */
size_t spool_nsegments(const struct spool *s);
const struct spool_segment *spool_segment_at(const struct spool *s, size_t i);
const char *spool_path(const struct spool *s);

/* Close (and unlock); when remove_if_empty and no record is held, delete the
 * directory. Returns the number of records left on disk. */
uint64_t spool_close(struct spool *s, bool remove_if_empty);

/* Replay: frames with seq > after, in order, reading one segment at a time.
 * Safe against appends, acks and drops between calls. */
struct spool_iter {
	struct spool *s;
	uint64_t after;   /* last seq returned (or the starting point) */
	uint32_t seg_id;  /* segment loaded in buf */
	uint64_t off;     /* file offset of the end of what buf holds */
	bool started;
	uint8_t *buf;
	size_t cap, len, pos;
};
void spool_iter_init(struct spool_iter *it, struct spool *s, uint64_t after_seq);
/* 1 and a frame (valid until the next call) with its seq; 0 at the end; -errno. */
int spool_iter_next(struct spool_iter *it, const uint8_t **frame, size_t *len, uint64_t *seq);
void spool_iter_free(struct spool_iter *it);

/* The seq field of a wire frame (varint length + Envelope), read without
 * unpacking. Returns 0 or -EBADMSG. */
int spool_frame_seq(const uint8_t *frame, size_t len, uint64_t *seq);

#endif
