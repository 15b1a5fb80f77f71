#include "target_end.h"

#include <stdio.h>
#include <sys/wait.h>

#include "cl_state_file.h"
#include "profiler.pb-c.h"
#include "signame.h"

int target_end_report(struct session *s, const struct target_end *e, FILE *out)
{
	Prof__TargetEnd t = PROF__TARGET_END__INIT;
	t.pid = e->pid;
	if (WIFSIGNALED(e->status)) {
		int sig = WTERMSIG(e->status);
		t.signal = (uint32_t)sig;
		t.exit_code = 128 + sig;
		t.core_dumped = WCOREDUMP(e->status) != 0;
		fprintf(out, " the program %s signal %d (%s%s)\n", sig_is_crash(sig) ? "crashed:" : "was killed by", sig,
			sig_name(sig), t.core_dumped ? ", core dumped" : "");
		if (e->capture_inside == CL_INSIDE_OWN)
			fprintf(out,
				" capture library: inside a call of its own when the program died: %s. The crash may be "
				"the profiler's: run the program without the agent to compare, and report it\n",
				e->capture_detail);
		else if (e->capture_inside == CL_INSIDE_FORWARDING)
			fprintf(out, " capture library: only forwarding the program's own calls when it died: %s\n",
				e->capture_detail);
		else if (e->capture_inside == CL_INSIDE_NO)
			fprintf(out, " capture library: no thread of the program was inside it when it died\n");
		else if (e->capture_inside == CL_INSIDE_UNKNOWN && e->capture_detail[0])
			fprintf(out, " capture library: %s\n", e->capture_detail);
		t.capture_inside = (uint32_t)e->capture_inside;
		t.capture_detail = (char *)e->capture_detail;
	} else {
		t.exit_code = WIFEXITED(e->status) ? WEXITSTATUS(e->status) : 1;
	}
	t.opencl_note = (char *)e->opencl_note;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_TARGET_END;
	env.target_end = &t;
	return session_send(s, &env);
}
