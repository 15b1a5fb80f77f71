/* `collector edag --trace FILE --format edan|native`: trace files read in
 * large blocks (plain, gzip or zstd: trace_in.h), split into lines in place
 * (no per-line allocation or copy) and classified: an instruction, a
 * comment/directive, or a bad line (reported as FILE:LINE: why, printable,
 * counted, and over the --max-bad limit the run fails with status 2). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_edag.h"
#include "log.h"
#include "trace_in.h"

#define BLOCK (1u << 20)	 /* bytes asked of the reader at once */
#define LINE_MAX_BYTES (64u << 10) /* a longer line is bad (and skipped to its end) */
#define SNIFF_BYTES 65536	 /* what the binary check looks at */
#define UNK_KEPT 64		 /* distinct unknown mnemonics counted by name */
#define UNK_SHOWN 20		 /* ... and reported one by one */
#define SPLIT_MIN (256u << 10)	 /* blocks at least this long are parsed by two threads */

struct unk {
	char name[24];
	uint64_t count, first_line;
};

struct text {
	struct run *r;
	struct edag_pipe *pipe;
	struct edag_edan_cache *cache; /* decoded instructions by PC (NULL: none) */
	struct edan_split *split;      /* a second EDAN parser (NULL: none) */
	bool edan;
	unsigned arch;
	int cpu_sel;
	uint64_t lineno, other_cpu, no_addr, no_addr_line;
	struct unk unk[UNK_KEPT];
	size_t nunk;
	uint64_t unk_other; /* instructions of unknown mnemonics beyond UNK_KEPT names */
};

static int bad_line(struct text *t, const char *why_raw, size_t len)
{
	char why[400], where[300];
	trace_escape(why_raw, len, 200, why, sizeof(why));
	char name[256];
	trace_escape(t->r->o->trace, strlen(t->r->o->trace), 200, name, sizeof(name));
	snprintf(where, sizeof(where), "%s:%llu", name, (unsigned long long)t->lineno);
	return cli_edag_bad(t->r, where, why);
}

static void unknown_mnemonic(struct text *t, const char *m, size_t len)
{
	if (len >= sizeof(t->unk[0].name))
		len = sizeof(t->unk[0].name) - 1;
	for (size_t i = 0; i < t->nunk; i++)
		if (strlen(t->unk[i].name) == len && memcmp(t->unk[i].name, m, len) == 0) {
			t->unk[i].count++;
			return;
		}
	if (t->nunk == UNK_KEPT) {
		t->unk_other++;
		return;
	}
	struct unk *u = &t->unk[t->nunk++];
	memcpy(u->name, m, len);
	u->name[len] = 0;
	u->count = 1;
	u->first_line = t->lineno;
}

static int cmp_unk(const void *a, const void *b)
{
	const struct unk *x = a, *y = b;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : strcmp(x->name, y->name);
}

static void report_unknown(struct text *t)
{
	const char *f = t->r->o->trace;
	qsort(t->unk, t->nunk, sizeof(t->unk[0]), cmp_unk);
	uint64_t rest = t->unk_other;
	for (size_t i = 0; i < t->nunk; i++) {
		if (i >= UNK_SHOWN) {
			rest += t->unk[i].count;
			continue;
		}
		log_warn("%s: unknown mnemonic '%s': %llu instructions (first at line %llu), class guessed", f,
			 t->unk[i].name, (unsigned long long)t->unk[i].count, (unsigned long long)t->unk[i].first_line);
	}
	if (rest)
		log_warn("%s: %llu more instructions of other unknown mnemonics", f, (unsigned long long)rest);
}

/* An EDAN line parsed (k as edag_edan_parse returns) into in. */
static int edan_result(struct text *t, int k, const struct edag_insn *in, const struct edag_edan_info *info,
		       const char *err)
{
	struct run *r = t->r;
	if (k == 0)
		return 0;
	r->items++;
	if (k < 0)
		return bad_line(t, err, strlen(err));
	if (info->cpu >= 0) {
		if (t->cpu_sel < 0)
			t->cpu_sel = info->cpu;
		if (info->cpu != t->cpu_sel) {
			t->other_cpu++;
			return 0;
		}
	}
	if (info->unknown)
		unknown_mnemonic(t, info->mnem, info->mnem_len);
	if (info->no_addr && t->no_addr++ == 0)
		t->no_addr_line = t->lineno;
	struct edag_insn *slot = cli_edag_pipe_slot(t->pipe);
	if (in != slot) /* parsed elsewhere (cli_edag_split.c) */
		*slot = *in;
	return cli_edag_pipe_commit(t->pipe, info->unknown);
}

static int text_line(struct text *t, const char *line, size_t len)
{
	struct run *r = t->r;
	struct edag_insn *in = cli_edag_pipe_slot(t->pipe);
	char err[300];
	int k;
	t->lineno++;
	if (t->edan) {
		struct edag_edan_info info;
		k = edag_edan_parse(line, len, in, &info, err, sizeof(err));
		return edan_result(t, k, in, &info, err);
	}
	struct edag_window_info wi;
	k = edag_parse_native_line(line, len, &t->arch, in, &wi, err, sizeof(err));
	if (k == 0)
		return 0;
	r->items++;
	if (k < 0)
		return bad_line(t, err, strlen(err));
	if (k == 2)
		return cli_edag_pipe_window(t->pipe, &wi);
	return cli_edag_pipe_commit(t->pipe, false);
}

/* EDAN lines of buf[off..n): split and parsed in one pass. */
static size_t edan_lines(struct text *t, const char *buf, size_t off, size_t n, int *rc)
{
	char err[300];
	while (off < n) {
		struct edag_insn *in = cli_edag_pipe_slot(t->pipe);
		struct edag_edan_info info;
		size_t used;
		int k = edag_edan_parse_next(buf + off, n - off, &used, in, &info, t->cache, err, sizeof(err));
		if (k == -EAGAIN)
			break;
		off += used;
		t->lineno++;
		if ((*rc = edan_result(t, k, in, &info, err)) < 0)
			break;
	}
	return off;
}

/* The whole lines of buf[0..n), EDAN: the first half parsed here, the
 * second by the other parser at the same time, then its records handed on
 * in order. *off: where the caller goes on. */
static int split_lines(struct text *t, char *buf, size_t n, size_t *off)
{
	const char *last = memrchr(buf, '\n', n);
	if (!last)
		return 0;
	size_t lim = (size_t)(last - buf) + 1;
	const char *m = memchr(buf + lim / 2, '\n', lim - lim / 2);
	size_t mid = (size_t)(m - buf) + 1; /* m is found: buf[lim - 1] is '\n' */
	if (mid >= lim)
		return 0;
	cli_edag_split_begin(t->split, buf, mid, lim);
	int rc = 0;
	size_t done = edan_lines(t, buf, 0, mid, &rc);
	const struct edan_rec *rec;
	size_t nrec;
	size_t end = cli_edag_split_wait(t->split, &rec, &nrec);
	if (rc < 0)
		return rc;
	if (done != mid) { /* not reached (whole lines up to mid): parse it all here */
		*off = done;
		return 0;
	}
	for (size_t i = 0; i < nrec; i++) {
		t->lineno++;
		rc = edan_result(t, rec[i].k, &rec[i].in, &rec[i].info, cli_edag_split_err(t->split, &rec[i]));
		if (rc < 0)
			return rc;
	}
	*off = end;
	return 0;
}

/* Lines of buf[0..*have): the complete ones are handled, a partial last
 * one moved to the front. *skipping: inside an over-long line. */
static int text_lines(struct text *t, char *buf, size_t *have, bool *skipping, bool last)
{
	size_t off = 0, n = *have;
	if (t->edan && !*skipping) {
		int rc = 0;
		if (t->split && n >= SPLIT_MIN && (rc = split_lines(t, buf, n, &off)) < 0)
			return rc;
		off = edan_lines(t, buf, off, n, &rc);
		if (rc < 0)
			return rc;
	}
	while (off < n) {
		char *nl = memchr(buf + off, '\n', n - off);
		if (!nl && !last)
			break;
		size_t end = nl ? (size_t)(nl - buf) : n;
		if (*skipping) {
			*skipping = false;
		} else {
			int rc = text_line(t, buf + off, end - off);
			if (rc < 0)
				return rc;
		}
		off = end + 1;
	}
	if (off >= n) {
		*have = 0;
		return 0;
	}
	size_t rest = n - off;
	if (rest >= LINE_MAX_BYTES) { /* no newline in sight: a bad line, skipped to its end */
		int rc = 0;
		if (!*skipping) {
			t->lineno++;
			t->r->items++;
			char why[80];
			snprintf(why, sizeof(why), "a line longer than %u bytes", LINE_MAX_BYTES);
			rc = bad_line(t, why, strlen(why));
			*skipping = true;
		}
		*have = 0;
		return rc;
	}
	memmove(buf, buf + off, rest);
	*have = rest;
	return 0;
}

static int run_text(struct run *r, struct trace_in *in, char *buf, size_t have, bool edan)
{
	struct text *t = calloc(1, sizeof(*t));
	if (!t) {
		log_error("edag: out of memory");
		return -EIO;
	}
	t->r = r;
	t->edan = edan;
	t->arch = r->o->arch ? r->o->arch : EDAG_ARCH_RISCV64;
	t->cpu_sel = r->o->cpu;
	t->cache = edan ? edag_edan_cache_new() : NULL; /* without one: slower, same results */
	t->split = edan && r->o->threads >= 3 ? cli_edag_split_start() : NULL;
	struct edag_window_info info = {.share = 1};
	int rc = cli_edag_pipe_start(r, &info, &t->pipe);
	if (rc < 0) {
		free(t);
		return rc;
	}
	bool skipping = false;
	char err[300];
	for (;;) {
		if (rc < 0)
			break;
		ssize_t got = 0;
		if (have < BLOCK + LINE_MAX_BYTES) {
			got = trace_in_read(in, (uint8_t *)buf + have, BLOCK + LINE_MAX_BYTES - have, err, sizeof(err));
			if (got < 0) {
				log_error("%s", err);
				rc = -EIO;
				break;
			}
		}
		have += (size_t)got;
		rc = text_lines(t, buf, &have, &skipping, got == 0);
		if (got == 0)
			break;
	}
	const char *f = r->o->trace;
	if (rc == 0 && t->other_cpu)
		log_warn("%s: %llu instructions of other vCPUs than %d skipped (one register file per run: pick "
			 "one with --cpu N)",
			 f, (unsigned long long)t->other_cpu, t->cpu_sel);
	if (rc == 0 && t->no_addr)
		log_warn("%s: %llu memory instructions without an address column (first at line %llu): vertices "
			 "without a memory access",
			 f, (unsigned long long)t->no_addr, (unsigned long long)t->no_addr_line);
	if (rc == 0)
		report_unknown(t);
	cli_edag_split_stop(t->split);
	int erc = cli_edag_pipe_finish(t->pipe, rc == 0);
	r->lines = t->lineno;
	edag_edan_cache_free(t->cache);
	free(t);
	if (rc == 0)
		rc = erc;
	if (rc == 0)
		rc = cli_edag_bad_check(r, "lines");
	return rc;
}

static int run_native_bin(struct run *r, struct trace_in *in, uint8_t *buf, size_t have)
{
	const char *f = r->o->trace;
	unsigned arch;
	if (have < EDAG_BIN_HEADER || edag_bin_header_decode(buf, have, &arch) < 0) {
		log_error("%s: a truncated native binary trace header", f);
		return -EBADMSG;
	}
	struct edag_window_info info = {.share = 1};
	struct edag_pipe *pipe;
	int rc = cli_edag_pipe_start(r, &info, &pipe);
	if (rc < 0)
		return rc;
	size_t off = EDAG_BIN_HEADER;
	uint64_t rec = 0, pos = 0; /* pos: file offset of buf[0] */
	char err[300];
	bool eof = false;
	while (rc == 0) {
		struct edag_insn *ins = cli_edag_pipe_slot(pipe);
		int used = edag_bin_decode(buf + off, have - off, ins);
		if (used < 0) {
			log_error("%s: binary record %llu (byte %llu) is malformed: not a native binary trace from here "
				  "on",
				  f, (unsigned long long)rec, (unsigned long long)(pos + off));
			rc = -EBADMSG;
			break;
		}
		if (used > 0) {
			off += (size_t)used;
			rec++;
			r->items++;
			rc = cli_edag_pipe_commit(pipe, false);
			continue;
		}
		if (eof) {
			if (have > off)
				log_warn("%s: %zu trailing bytes (a truncated record) ignored", f, have - off);
			break;
		}
		memmove(buf, buf + off, have - off);
		pos += off;
		have -= off;
		off = 0;
		ssize_t got = trace_in_read(in, buf + have, BLOCK - have, err, sizeof(err));
		if (got < 0) {
			log_error("%s", err);
			rc = -EIO;
			break;
		}
		have += (size_t)got;
		eof = got == 0;
	}
	int erc = cli_edag_pipe_finish(pipe, rc == 0);
	return rc < 0 ? rc : erc;
}

int cli_edag_run_file(struct run *r)
{
	const char *f = r->o->trace;
	struct trace_in *in;
	char err[400];
	int rc = trace_in_open(f, &in, err, sizeof(err));
	if (rc < 0) {
		log_error("%s", err);
		return -EIO;
	}
	char *buf = malloc(BLOCK + LINE_MAX_BYTES);
	if (!buf) {
		trace_in_close(in);
		log_error("edag: out of memory");
		return -EIO;
	}
	/* the first block: what is it? */
	size_t have = 0;
	while (have < SNIFF_BYTES) {
		ssize_t got = trace_in_read(in, (uint8_t *)buf + have, BLOCK - have, err, sizeof(err));
		if (got < 0) {
			log_error("%s", err);
			rc = -EIO;
			goto out;
		}
		if (got == 0)
			break;
		have += (size_t)got;
	}
	const char *what;
	const char *comp = trace_in_comp(in) == TRACE_IN_GZIP ? " (gzip)" : trace_in_comp(in) == TRACE_IN_ZSTD ? " (zstd)" : "";
	enum trace_sniff kind = trace_sniff((const uint8_t *)buf, have < SNIFF_BYTES ? have : SNIFF_BYTES, &what);
	bool edan = strcmp(r->o->format, "edan") == 0;
	if (kind == TRACE_SNIFF_BINARY) {
		log_error("%s%s: not a text trace: it looks like %s", f, comp, what);
		rc = -EBADMSG;
	} else if (kind == TRACE_SNIFF_EDAG_BIN && edan) {
		log_error("%s%s: a native binary trace (EDAGTRC1), not EDAN text: use --format native", f, comp);
		rc = -EBADMSG;
	} else if (kind == TRACE_SNIFF_EDAG_BIN) {
		rc = run_native_bin(r, in, (uint8_t *)buf, have);
	} else {
		rc = run_text(r, in, buf, have, edan);
	}
out:
	free(buf);
	trace_in_close(in);
	return rc;
}
