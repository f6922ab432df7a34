/* precordd's status: the one-line summary for the service manager (STATUS=) and the
 * key = value reply to `precord ctl status`, from the session's and the jobs' statistics.
 * Nothing here waits for a rotation: during one, the session's statistics are those of
 * before it (session__stats). */
#include "daemon/export.h"
#include "daemon/compact.h"
#include "daemon/daemon_int.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/human.h"
#include "daemon/sdnotify.h"
#include "record/record.h"

struct totals {
	uint64_t samples, lost, written;
	double paused;
};


static void totals(struct daemon *d, struct totals *t)
{
	struct record_stats st;

	memset(t, 0, sizeof(*t));
	t->samples = d->past_samples;
	t->lost = d->past_lost;
	if (d->rec) {
		session__stats(d, &st);
		t->samples += st.samples;
		t->lost += st.lost_events + st.lost_samples;
		t->written = st.bytes_written;
	}
	for (size_t i = 0; i < d->nr_jobs; i++) {
		record__stats(d->jobs[i].rec, &st);
		t->paused += st.paused_total;
	}
}

void status__line(struct daemon *d, char *buf, size_t size)
{
	struct totals t;
	char disk[32], budget[32], rate[32];

	totals(d, &t);
	human__bytes(d->closed_bytes + d->cur_bytes + d->rot_new_bytes + d->unwinding_disk, disk,
		     sizeof(disk));
	human__bytes(d->cfg.max_total_size, budget, sizeof(budget));
	human__bytes((uint64_t)d->rate, rate, sizeof(rate));
	if (d->rec)
		snprintf(buf, size, "recording %s at %llu Hz: %zu files, %s of %s, %s/s, %llu lost, "
			 "%.1f s paused, %zu control sessions", d->cfg.event,
			 (unsigned long long)d->cfg.frequency, d->nr_files + 1, disk, budget, rate,
			 (unsigned long long)t.lost, t.paused, d->nr_jobs);
	else
		snprintf(buf, size, "%s: %zu files, %s of %s, %zu control sessions",
			 d->state_msg[0] ? d->state_msg :
			 d->cfg.continuous ? "idle" : "idle (continuous = no)",
			 d->nr_files, disk, budget, d->nr_jobs);
}

void status__update_rate(struct daemon *d)
{
	uint64_t now = clock__ms();
	struct record_stats st;

	if (!d->rec || d->rotating || now <= d->rate_t_ms)
		return;
	session__stats(d, &st);
	/* bytes_written restarts with each file: count the read side, which does not */
	d->rate = (double)(st.bytes_read - d->rate_bytes) * 1000.0 / (double)(now - d->rate_t_ms);
	if (st.bytes_read < d->rate_bytes)
		d->rate = 0;
	d->rate_bytes = st.bytes_read;
	d->rate_t_ms = now;
}

void status__notify(struct daemon *d)
{
	char line[512];

	status__update_rate(d);
	status__line(d, line, sizeof(line));
	sdnotify__status(line);
}

void status__reply(struct daemon *d, struct ctl_client *c)
{
	struct totals t;
	char line[CTL_MAX_LINE], exp[512];
	const char *cur = d->rec ? strrchr(d->cur_path, '/') + 1 : "-";

	totals(d, &t);
	snprintf(line, sizeof(line), "OK state=%s files=%zu disk_bytes=%llu budget_bytes=%llu "
		 "current=%s rotations=%llu deleted=%llu samples=%llu lost=%llu rate_bps=%.0f "
		 "paused_s=%.3f sessions=%zu sessions_bytes=%llu unwound=%llu unwound_saved_bytes=%llu "
		 "unwinding=%u rotating=%d", d->rec ? "recording" : "idle",
		 d->nr_files + (d->rec ? 1 : 0),
		 (unsigned long long)(d->closed_bytes + d->cur_bytes + d->rot_new_bytes + d->unwinding_disk),
		 (unsigned long long)d->cfg.max_total_size, cur, (unsigned long long)d->rotations,
		 (unsigned long long)d->deleted, (unsigned long long)t.samples,
		 (unsigned long long)t.lost, d->rate, t.paused, d->nr_jobs + d->nr_handovers,
		 (unsigned long long)jobs__bytes(d), (unsigned long long)d->unwound,
		 (unsigned long long)d->unwound_saved,
		 d->compactor ? compactor__pending(d->compactor) : 0, d->rotating);
	export__status(d, exp, sizeof(exp));
	snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s", exp);
	ctl_client__finish(c, line, -1);
}
