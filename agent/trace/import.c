#include "generated/config.h"
#ifdef CONFIG_AGENT_TRACE_IMPORT

#include "import.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/native.h"

#define LINE_MAX_BYTES 4096 /* longest text line accepted */

_Static_assert(TRACE_REC_MAX_REGS >= EDAG_MAX_REGS, "a trace_rec holds every register of an edag_insn");
_Static_assert(LINE_MAX_BYTES >= EDAG_BIN_MAX_RECORD, "pend holds a partial binary record");

enum format { FMT_UNKNOWN, FMT_BINARY, FMT_TEXT };

struct trace_import {
	size_t piece;
	unsigned arch, default_arch;
	enum format fmt;
	trace_import_emit_fn emit;
	void *ctx;
	struct trace_window w;	     /* the piece being filled */
	struct trace_encode_info run; /* metadata of the current run */
	uint64_t pos;		     /* next instruction's position in the run, from 1 */
	uint64_t run_represented;    /* a directive's represented_insns, not yet given to a piece */
	bool run_full;		     /* no directive: a full trace (represented = piece length) */
	uint8_t pend[LINE_MAX_BYTES]; /* a partial record (binary), line (text) or the first bytes */
	size_t npend;
	uint64_t records, lineno;
	struct trace_import_stats st;
};

int trace_import_new(struct trace_import **out, size_t piece, unsigned default_arch, trace_import_emit_fn emit,
		     void *ctx)
{
	if (piece == 0 || piece > TRACE_WINDOW_MAX || !emit)
		return -EINVAL;
	struct trace_import *ti = calloc(1, sizeof(*ti));
	if (!ti)
		return -ENOMEM;
	ti->w.rec = malloc(piece * sizeof(*ti->w.rec));
	if (!ti->w.rec) {
		free(ti);
		return -ENOMEM;
	}
	ti->w.cap = piece;
	ti->piece = piece;
	ti->default_arch = default_arch;
	ti->emit = emit;
	ti->ctx = ctx;
	ti->run.sampled_share = 1.0;
	ti->run_full = true;
	ti->pos = 1;
	ti->st.runs = 1;
	*out = ti;
	return 0;
}

void trace_import_free(struct trace_import *ti)
{
	if (!ti)
		return;
	free(ti->w.rec);
	free(ti);
}

unsigned trace_import_arch(const struct trace_import *ti)
{
	return ti->arch;
}

const char *trace_import_format(const struct trace_import *ti)
{
	return ti->fmt == FMT_BINARY ? "binary" : ti->fmt == FMT_TEXT ? "text" : NULL;
}

const struct trace_import_stats *trace_import_stats(const struct trace_import *ti)
{
	return &ti->st;
}

static int flush_piece(struct trace_import *ti)
{
	size_t n = ti->w.n;
	if (n == 0)
		return 0;
	struct trace_encode_info info = ti->run;
	info.arch = (enum trace_arch)ti->arch;
	info.trace_pos = ti->pos;
	if (ti->run_full) {
		info.represented_insns = n;
	} else {
		info.represented_insns = ti->run_represented;
		ti->run_represented = 0;
	}
	ti->pos += n;
	ti->st.pieces++;
	ti->w.capture = ti->run_full ? TRACE_CAPTURE_FULL : 0;
	int rc = ti->emit(ti->ctx, &ti->w, &info);
	ti->w.n = 0;
	return rc;
}

static int add_insn(struct trace_import *ti, const struct edag_insn *in)
{
	struct trace_rec *r = &ti->w.rec[ti->w.n++];
	memset(r, 0, sizeof(*r));
	r->pc = in->pc;
	r->iclass = in->cls;
	r->nread = in->nread;
	r->nwrite = in->nwrite;
	memcpy(r->read, in->rd, in->nread);
	memcpy(r->written, in->wr, in->nwrite);
	if (in->mem) {
		r->nmem = 1;
		r->rw[0] = in->mem;
		r->addr[0] = in->addr;
		r->size[0] = (uint16_t)in->size;
	}
	ti->st.insns++;
	return ti->w.n == ti->piece ? flush_piece(ti) : 0;
}

/* ---------------------------------------------------------------- binary */

static int bin_records(struct trace_import *ti, const uint8_t *buf, size_t len, size_t *used, char *err,
		       size_t errlen)
{
	size_t off = 0;
	while (off < len) {
		struct edag_insn in;
		int n = edag_bin_decode(buf + off, len - off, &in);
		if (n < 0) {
			snprintf(err, errlen, "binary record %llu (input byte %llu) is malformed",
				 (unsigned long long)ti->records, (unsigned long long)(ti->st.bytes - ti->npend));
			return -EINVAL;
		}
		if (n == 0)
			break;
		off += (size_t)n;
		ti->records++;
		int rc = add_insn(ti, &in);
		if (rc < 0) {
			*used = off;
			return rc;
		}
	}
	*used = off;
	return 0;
}

static int feed_binary(struct trace_import *ti, const uint8_t *buf, size_t len, char *err, size_t errlen)
{
	size_t used;
	int rc;
	/* Complete a record split across feeds: at most EDAG_BIN_MAX_RECORD bytes are pending. */
	while (ti->npend > 0 && len > 0) {
		size_t take = EDAG_BIN_MAX_RECORD - ti->npend < len ? EDAG_BIN_MAX_RECORD - ti->npend : len;
		memcpy(ti->pend + ti->npend, buf, take);
		size_t had = ti->npend;
		ti->npend += take;
		rc = bin_records(ti, ti->pend, ti->npend, &used, err, errlen);
		if (rc < 0)
			return rc;
		if (used == 0) { /* still incomplete: all of buf went into pend */
			buf += take;
			len -= take;
			continue;
		}
		/* the pending record ended `used - had` bytes into buf: go on from there */
		buf += used - had;
		len -= used - had;
		ti->npend = 0;
	}
	if (ti->npend > 0) /* all of buf went into the pending record */
		return 0;
	rc = bin_records(ti, buf, len, &used, err, errlen);
	if (rc < 0)
		return rc;
	memcpy(ti->pend, buf + used, len - used); /* less than one record */
	ti->npend = len - used;
	return 0;
}

/* ---------------------------------------------------------------- text */

static int text_line(struct trace_import *ti, const char *line, size_t len, char *err, size_t errlen)
{
	ti->lineno++;
	unsigned arch = ti->arch ? ti->arch : ti->default_arch;
	struct edag_insn in;
	struct edag_window_info wi;
	char why[200];
	int k = edag_parse_native_line(line, len, &arch, &in, &wi, why, sizeof(why));
	if (k < 0) {
		snprintf(err, errlen, "line %llu: %s%s", (unsigned long long)ti->lineno, why,
			 arch ? "" : " (no 'arch' line before it: give --arch)");
		return -EINVAL;
	}
	if (arch && ti->arch != arch) {
		if (ti->arch && (ti->st.insns > 0 || ti->w.n > 0)) {
			snprintf(err, errlen, "line %llu: a second arch (%s after %s) in one trace",
				 (unsigned long long)ti->lineno, edag_arch_name(arch), edag_arch_name(ti->arch));
			return -EINVAL;
		}
		ti->arch = arch;
	}
	if (k == 2) { /* window directive: a new run */
		int rc = flush_piece(ti);
		if (rc < 0)
			return rc;
		if (ti->st.insns > 0)
			ti->st.runs++;
		ti->run.pid = wi.pid;
		ti->run.t_ns = wi.t_ns;
		ti->run.sampled_share = wi.share;
		ti->w.tid = wi.tid;
		ti->run_full = false;
		ti->run_represented = wi.represented_insns;
		ti->pos = 1;
		return 0;
	}
	if (k == 1) {
		if (!ti->arch) {
			snprintf(err, errlen, "line %llu: an instruction before any 'arch' line (give --arch)",
				 (unsigned long long)ti->lineno);
			return -EINVAL;
		}
		return add_insn(ti, &in);
	}
	return 0;
}

static int feed_text(struct trace_import *ti, const uint8_t *buf, size_t len, char *err, size_t errlen)
{
	while (len > 0) {
		const uint8_t *nl = memchr(buf, '\n', len);
		size_t seg = nl ? (size_t)(nl - buf) : len;
		if (ti->npend + seg > sizeof(ti->pend)) {
			snprintf(err, errlen, "line %llu is longer than %u bytes", (unsigned long long)ti->lineno + 1,
				 LINE_MAX_BYTES);
			return -EINVAL;
		}
		memcpy(ti->pend + ti->npend, buf, seg);
		ti->npend += seg;
		if (!nl)
			return 0;
		int rc = text_line(ti, (const char *)ti->pend, ti->npend, err, errlen);
		ti->npend = 0;
		if (rc < 0)
			return rc;
		buf += seg + 1;
		len -= seg + 1;
	}
	return 0;
}

/* ---------------------------------------------------------------- format detection */

static int decide(struct trace_import *ti, char *err, size_t errlen)
{
	if (ti->npend >= EDAG_BIN_HEADER && memcmp(ti->pend, EDAG_BIN_MAGIC, 8) == 0) {
		unsigned arch;
		edag_bin_header_decode(ti->pend, ti->npend, &arch);
		if (arch < TRACE_ARCH_X86_64 || arch > TRACE_ARCH_RISCV64) {
			snprintf(err, errlen, "binary trace header: unknown arch %u", arch);
			return -EINVAL;
		}
		ti->arch = arch;
		ti->fmt = FMT_BINARY;
		ti->npend = 0; /* only the header was gathered */
		return 0;
	}
	ti->fmt = FMT_TEXT;
	uint8_t tmp[EDAG_BIN_HEADER];
	size_t n = ti->npend;
	memcpy(tmp, ti->pend, n);
	ti->npend = 0;
	return feed_text(ti, tmp, n, err, errlen);
}

int trace_import_feed(struct trace_import *ti, const uint8_t *buf, size_t len, char *err, size_t errlen)
{
	ti->st.bytes += len;
	if (ti->fmt == FMT_UNKNOWN) {
		/* Gather the 16-byte binary header (or enough to see it is text). */
		size_t take = EDAG_BIN_HEADER - ti->npend < len ? EDAG_BIN_HEADER - ti->npend : len;
		memcpy(ti->pend + ti->npend, buf, take);
		ti->npend += take;
		buf += take;
		len -= take;
		bool text = ti->npend >= 8 && memcmp(ti->pend, EDAG_BIN_MAGIC, 8) != 0;
		if (ti->npend < EDAG_BIN_HEADER && !text)
			return 0;
		int rc = decide(ti, err, errlen);
		if (rc < 0)
			return rc;
	}
	return ti->fmt == FMT_BINARY ? feed_binary(ti, buf, len, err, errlen) : feed_text(ti, buf, len, err, errlen);
}

int trace_import_finish(struct trace_import *ti, char *err, size_t errlen)
{
	int rc;
	if (ti->fmt == FMT_UNKNOWN) {
		if (ti->npend >= 8 && memcmp(ti->pend, EDAG_BIN_MAGIC, 8) == 0) {
			snprintf(err, errlen, "truncated binary trace header (%zu of %u bytes)", ti->npend,
				 EDAG_BIN_HEADER);
			return -EINVAL;
		}
		if ((rc = decide(ti, err, errlen)) < 0)
			return rc;
	}
	if (ti->fmt == FMT_BINARY && ti->npend > 0) {
		snprintf(err, errlen, "the trace ends inside a record (%zu trailing bytes after record %llu)", ti->npend,
			 (unsigned long long)ti->records);
		return -EINVAL;
	}
	if (ti->fmt == FMT_TEXT && ti->npend > 0) { /* last line without a newline */
		rc = text_line(ti, (const char *)ti->pend, ti->npend, err, errlen);
		ti->npend = 0;
		if (rc < 0)
			return rc;
	}
	if (!ti->arch) {
		snprintf(err, errlen, "no trace: neither a binary header nor an 'arch' line%s",
			 ti->default_arch ? "" : " (give --arch for a text trace without one)");
		if (!ti->default_arch)
			return -EINVAL;
		ti->arch = ti->default_arch;
	}
	return flush_piece(ti);
}

#endif /* CONFIG_AGENT_TRACE_IMPORT */
