#!/usr/bin/env python3
"""generate-dashboards.py — writes the Grafana dashboards in contrib/grafana/.

The dashboards are JSON for Grafana 10+ (schemaVersion 38), importable by hand
or provisioned from /usr/share/vnfs/grafana.  They are generated so that every
panel shares one label filter, one data source variable and one layout rule;
edit this file and run it, then commit both:

    contrib/grafana/generate-dashboards.py        # rewrites contrib/grafana/*.json

The metric families and labels are those of helper/outputs/metrics.c (docs/METRICS.md):
Slurm step series carry job_id, step_id, user (and tag_<NAME> labels), a
Kubernetes container's pod ("NAMESPACE/NAME") and container in place of
job_id and step_id; Prometheus adds instance.  Counters hold the step's
total since it was registered, so a job's total in a time range is
last_over_time() summed over its steps and nodes, exact even when the job
ended inside the range.

tests/guest/suites/dashboards.sh runs every query below against a real
Prometheus scraping a real helper, with the template variables filled in.
"""
import json
import os
import sys

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
RATE = "$__rate_interval"
RANGE = "$__range"

# The filter of every per-step query: the dashboard's node, user and job choice.
STEP_FILTER = 'instance=~"$instance", user=~"$user", job_id=~"$job_id"'
USER_FILTER = 'instance=~"$instance", user=~"$user"'

# A Kubernetes pod's namespace is no label of its own: it is the part of pod
# before "/", taken out by this expression both in PromQL (label_replace,
# which anchors it) and in the namespace variable (Grafana's regex, anchored
# there).
NAMESPACE_OF_POD = "([^/]+)/.*"
# The pods of the chosen namespaces (which leaves Slurm's series out: they
# have no pod), then the chosen pods and containers.
POD_FILTER = ('instance=~"$instance", pod=~"$namespace/.*", pod=~"$pod", '
              'container=~"$container"')


# ---- template variables ------------------------------------------------------

def datasource_variable(plugin="prometheus"):
    return {
        "name": "datasource", "label": "Data source", "type": "datasource",
        "query": plugin, "current": {}, "hide": 0, "includeAll": False,
        "multi": False, "options": [], "refresh": 1, "regex": "",
    }


def query_variable(name, label, query, multi=True, include_all=True, sort=3, all_value=".*"):
    variable = {
        "name": name, "label": label, "type": "query", "datasource": DATASOURCE,
        "definition": query,
        "query": {"query": query, "refId": "PrometheusVariableQueryEditor-VariableQuery"},
        "current": {}, "hide": 0, "includeAll": include_all, "multi": multi,
        "options": [], "refresh": 2, "regex": "", "sort": sort,
    }
    if include_all:
        variable["allValue"] = all_value
    return variable


def custom_variable(name, label, values, default):
    return {
        "name": name, "label": label, "type": "custom", "query": ",".join(values),
        "current": {"selected": True, "text": default, "value": default},
        "hide": 0, "includeAll": False, "multi": False,
        "options": [{"selected": v == default, "text": v, "value": v} for v in values],
    }


def instance_variable():
    return query_variable("instance", "Node", "label_values(vnfs_helper_build_info, instance)")


def user_variable():
    return query_variable("user", "User",
                          'label_values(vnfs_operations_total{instance=~"$instance"}, user)')


def job_variable(name="job_id", label="Job", multi=True):
    # "All" is every Slurm job: ".+", since ".*" would also match the
    # series that have no job_id (Kubernetes pods, vnfs-kubernetes.json's).
    return query_variable(
        name, label,
        'label_values(vnfs_operations_total{instance=~"$instance", user=~"$user"}, job_id)',
        multi=multi, include_all=multi, all_value=".+")


def namespace_variable():
    variable = query_variable("namespace", "Namespace",
                              'label_values(vnfs_operations_total{instance=~"$instance"}, pod)', sort=1)
    # Grafana's form of a regular expression, /.../, its slashes escaped.
    escaped = NAMESPACE_OF_POD.replace("/", "\\/")
    variable["regex"] = f"/^{escaped}$/"
    return variable


def pod_variable():
    return query_variable(
        "pod", "Pod",
        'label_values(vnfs_operations_total{instance=~"$instance", pod=~"$namespace/.*"}, pod)', sort=1)


def container_variable():
    return query_variable(
        "container", "Container",
        'label_values(vnfs_operations_total{instance=~"$instance", pod=~"$namespace/.*", '
        'pod=~"$pod"}, container)', sort=1)


# ---- panels ------------------------------------------------------------------

def target(expr, legend="", ref="A", instant=False, table=False):
    result = {"datasource": DATASOURCE, "expr": expr, "refId": ref,
              "legendFormat": legend or "__auto", "range": not instant, "instant": instant,
              "editorMode": "code"}
    if table:
        result["format"] = "table"
    return result


def timeseries(title, description, targets, unit, stack=False):
    return {
        "type": "timeseries", "title": title, "description": description,
        "datasource": DATASOURCE, "targets": targets,
        "fieldConfig": {
            "defaults": {
                "unit": unit,
                "custom": {"drawStyle": "line", "lineWidth": 1, "fillOpacity": 10,
                           "showPoints": "never", "spanNulls": False,
                           "stacking": {"mode": "normal" if stack else "none", "group": "A"}},
            },
            "overrides": [],
        },
        "options": {
            "legend": {"displayMode": "table", "placement": "bottom", "showLegend": True,
                       "calcs": ["mean", "max"]},
            "tooltip": {"mode": "multi", "sort": "desc"},
        },
    }


def stat(title, description, expr, unit):
    return {
        "type": "stat", "title": title, "description": description,
        "datasource": DATASOURCE, "targets": [target(expr, instant=True)],
        "fieldConfig": {"defaults": {"unit": unit, "decimals": 0}, "overrides": []},
        "options": {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                    "colorMode": "value", "graphMode": "none", "textMode": "auto",
                    "justifyMode": "auto", "orientation": "auto"},
    }


def table(title, description, columns, unit="short", sort_by=None):
    """columns: (header, expr, unit) triples, merged on their labels."""
    targets = []
    overrides = []
    rename = {}
    for index, (header, expr, column_unit) in enumerate(columns):
        ref = chr(ord("A") + index)
        targets.append(target(expr, ref=ref, instant=True, table=True))
        column = "Value #" + ref if len(columns) > 1 else "Value"
        rename[column] = header
        overrides.append({"matcher": {"id": "byName", "options": header},
                          "properties": [{"id": "unit", "value": column_unit}]})
    transformations = []
    if len(columns) > 1:
        transformations.append({"id": "merge", "options": {}})
    transformations.append({"id": "organize", "options": {
        "excludeByName": {"Time": True, "__name__": True, "job": True},
        "renameByName": rename}})
    panel = {
        "type": "table", "title": title, "description": description,
        "datasource": DATASOURCE, "targets": targets, "transformations": transformations,
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": overrides},
        "options": {"showHeader": True, "cellHeight": "sm"},
    }
    if sort_by:
        panel["options"]["sortBy"] = [{"displayName": sort_by, "desc": True}]
    return panel


def row(title):
    return {"type": "row", "title": title, "collapsed": False, "panels": []}


def job_total(family, filter_text, by):
    """A job's (or group's) total in the time range, from the step counters."""
    grouping = f" by ({by})" if by else ""
    return f"sum{grouping} (last_over_time({family}{{{filter_text}}}[{RANGE}]))"


def rate_sum(family, filter_text, by):
    return f"sum by ({by}) (rate({family}{{{filter_text}}}[{RATE}]))"


def with_namespace(expr):
    """expr's series with a namespace label, taken from their pod."""
    return f'label_replace({expr}, "namespace", "$1", "pod", "{NAMESPACE_OF_POD}")'


def namespace_total(family, filter_text):
    return f"sum by (namespace) ({with_namespace(f'last_over_time({family}{{{filter_text}}}[{RANGE}])')})"


def namespace_rate(family, filter_text):
    return f"sum by (namespace) ({with_namespace(f'rate({family}{{{filter_text}}}[{RATE}])')})"


def quantile(q, filter_text, by):
    return (f"histogram_quantile({q}, sum by ({by}, le) "
            f"(rate(vnfs_operation_duration_seconds_bucket{{{filter_text}}}[{RATE}])))")


# ---- layout --------------------------------------------------------------------

def layout(panels):
    """Places panels left to right on Grafana's 24-column grid, rows full width."""
    x = y = 0
    line_height = 0
    for number, panel in enumerate(panels, start=1):
        panel["id"] = number
        if panel["type"] == "row":
            width, height = 24, 1
        elif panel["type"] == "stat":
            width, height = 6, 4
        elif panel["type"] == "table":
            width, height = panel.pop("width", 24), 8
        else:
            width, height = panel.pop("width", 12), 8
        if x + width > 24 or panel["type"] == "row":
            x, y = 0, y + line_height
            line_height = 0
        panel["gridPos"] = {"h": height, "w": width, "x": x, "y": y}
        x += width
        line_height = max(line_height, height)
        if panel["type"] == "row":
            x, y, line_height = 0, y + 1, 0
    return panels


def dashboard(uid, title, description, variables, panels, tags=("slurm",),
              source=("prometheus", "Prometheus", "10.0.0")):
    plugin, plugin_name, grafana_version = source
    return {
        "__requires": [
            {"type": "grafana", "id": "grafana", "name": "Grafana", "version": grafana_version},
            {"type": "datasource", "id": plugin, "name": plugin_name, "version": "1.0.0"},
        ],
        "annotations": {"list": [{
            "builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"},
            "enable": True, "hide": True, "iconColor": "rgba(0, 211, 255, 1)",
            "name": "Annotations & Alerts", "type": "dashboard"}]},
        "description": description,
        "editable": True,
        "fiscalYearStartMonth": 0,
        "graphTooltip": 1,
        "id": None,
        "links": [{"type": "dashboards", "tags": ["vnfs"], "asDropdown": True,
                   "title": "vnfs dashboards", "includeVars": True, "keepTime": True}],
        "panels": layout(panels),
        "refresh": "30s",
        "schemaVersion": 38,
        "tags": ["vnfs", "nfs", *tags],
        "templating": {"list": [datasource_variable(plugin)] + variables},
        "time": {"from": "now-3h", "to": "now"},
        "timepicker": {},
        "timezone": "",
        "title": title,
        "uid": uid,
        "version": 1,
        "weekStart": "",
    }


# ---- the dashboards ----------------------------------------------------------

def job_io():
    f = STEP_FILTER
    return dashboard(
        "vnfs-job-io", "vnfs: NFS I/O by job",
        "What the selected jobs did to NFS: bytes, operations, errors, by step, "
        "node and mount.",
        [instance_variable(), user_variable(), job_variable()],
        [
            stat("Bytes written", "Bytes the selected jobs wrote to NFS in the time range.",
                 job_total("vnfs_write_bytes_total", f, ""), "bytes"),
            stat("Bytes read", "Bytes the selected jobs read from NFS with read() in the time range.",
                 job_total("vnfs_read_bytes_total", f, ""), "bytes"),
            stat("NFS operations", "Operations of every kind in the time range.",
                 job_total("vnfs_operations_total", f, ""), "short"),
            stat("Failed operations", "Operations that returned an error in the time range.",
                 job_total("vnfs_operation_errors_total", f, ""), "short"),
            timeseries("Write throughput by job", "Bytes written per second.",
                       [target(rate_sum("vnfs_write_bytes_total", f, "job_id"), "job {{job_id}}")],
                       "Bps"),
            timeseries("Read throughput by job",
                       "Bytes read per second, with read() and through mmap page faults.",
                       [target(rate_sum("vnfs_read_bytes_total", f, "job_id"), "job {{job_id}} read()", "A"),
                        target(rate_sum("vnfs_mmap_read_bytes_total", f, "job_id"),
                               "job {{job_id}} mmap", "B")], "Bps"),
            timeseries("Operations per second by operation", "All selected jobs together.",
                       [target(rate_sum("vnfs_operations_total", f, "op"), "{{op}}")], "ops",
                       stack=True),
            timeseries("Throughput by node", "Bytes read and written per second, by node.",
                       [target(rate_sum("vnfs_write_bytes_total", f, "instance"), "{{instance}} write", "A"),
                        target(rate_sum("vnfs_read_bytes_total", f, "instance"), "{{instance}} read", "B")],
                       "Bps"),
            table("Steps", "Each step's totals in the time range.", [
                ("Written", job_total("vnfs_write_bytes_total", f, "job_id, step_id, user"), "bytes"),
                ("Read", job_total("vnfs_read_bytes_total", f, "job_id, step_id, user"), "bytes"),
                ("Operations", job_total("vnfs_operations_total", f, "job_id, step_id, user"), "short"),
                ("Errors", job_total("vnfs_operation_errors_total", f, "job_id, step_id, user"), "short"),
            ], sort_by="Written"),
            table("Mounts", "What the selected jobs did on each NFS mount in the time range.", [
                ("Written", job_total("vnfs_mount_write_bytes_total", f, "job_id, mount, server, version"), "bytes"),
                ("Read", job_total("vnfs_mount_read_bytes_total", f, "job_id, mount, server, version"), "bytes"),
                ("Operations", job_total("vnfs_mount_operations_total", f, "job_id, mount, server, version"), "short"),
                ("Errors", job_total("vnfs_mount_operation_errors_total", f, "job_id, mount, server, version"), "short"),
            ], sort_by="Operations"),
            timeseries("Median request size", "Half of the read and write requests are smaller.",
                       [target("histogram_quantile(0.5, sum by (direction, le) "
                               f"(rate(vnfs_request_size_bytes_bucket{{{f}}}[{RATE}])))",
                               "{{direction}}")], "bytes"),
            timeseries("Time in NFS operations", "Seconds per second the selected jobs spent "
                       "in NFS client operations, by operation: 1 is one process always waiting.",
                       [target(rate_sum("vnfs_operation_duration_seconds_sum", f, "op"), "{{op}}")],
                       "s", stack=True),
        ])


def writes_by_process():
    f = STEP_FILTER + ', comm=~"$comm"'
    comm = query_variable(
        "comm", "Process",
        'label_values(vnfs_process_write_bytes_total{instance=~"$instance", user=~"$user", '
        'job_id=~"$job_id"}, comm)')
    return dashboard(
        "vnfs-writes-by-process", "vnfs: writes by process name",
        "Which programs of the selected jobs write to NFS (process names as the "
        "kernel keeps them: 15 characters).",
        [instance_variable(), user_variable(), job_variable(), comm],
        [
            timeseries("Write throughput by process", "Bytes written per second, by process name.",
                       [target(rate_sum("vnfs_process_write_bytes_total", f, "comm"), "{{comm}}")],
                       "Bps", stack=True),
            timeseries("Write calls by process", "write() calls per second, by process name.",
                       [target(rate_sum("vnfs_process_write_operations_total", f, "comm"), "{{comm}}")],
                       "ops", stack=True),
            table("Bytes written by process", "Totals in the time range, all selected jobs together.", [
                ("Written", job_total("vnfs_process_write_bytes_total", f, "comm"), "bytes"),
                ("Write calls", job_total("vnfs_process_write_operations_total", f, "comm"), "short"),
            ], sort_by="Written"),
            table("Bytes written by process and job", "Totals in the time range.", [
                ("Written", job_total("vnfs_process_write_bytes_total", f, "job_id, user, comm"), "bytes"),
                ("Read", job_total("vnfs_process_read_bytes_total", f, "job_id, user, comm"), "bytes"),
                ("Other operations", job_total("vnfs_process_other_operations_total", f, "job_id, user, comm"), "short"),
            ], sort_by="Written"),
            timeseries("Read throughput by process", "Bytes read per second, by process name.",
                       [target(rate_sum("vnfs_process_read_bytes_total", f, "comm"), "{{comm}}")],
                       "Bps", stack=True),
            timeseries("Metadata operations by process",
                       "Operations other than read and write per second (open, stat, ...).",
                       [target(rate_sum("vnfs_process_other_operations_total", f, "comm"), "{{comm}}")],
                       "ops", stack=True),
        ])


def writes_by_job():
    f = USER_FILTER
    return dashboard(
        "vnfs-writes-by-job", "vnfs: writes by job",
        "The jobs that write most to NFS, by job id.",
        [instance_variable(), user_variable(),
         custom_variable("top", "Jobs shown", ["5", "10", "20", "50"], "10")],
        [
            timeseries("Write throughput, top $top jobs", "Bytes written per second.",
                       [target(f"topk($top, {rate_sum('vnfs_write_bytes_total', f, 'job_id, user')})",
                               "job {{job_id}} ({{user}})")], "Bps"),
            timeseries("Write calls, top $top jobs", "write() calls per second.",
                       [target("topk($top, sum by (job_id, user) "
                               f"(rate(vnfs_operations_total{{{f}, op=\"write\"}}[{RATE}])))",
                               "job {{job_id}} ({{user}})")], "ops"),
            table("Bytes written per job", "Totals in the time range, largest first.", [
                ("Written", f"sort_desc({job_total('vnfs_write_bytes_total', f, 'job_id, user')})", "bytes"),
                ("Write calls", job_total("vnfs_operations_total", f + ', op="write"', "job_id, user"), "short"),
                ("fsync calls", job_total("vnfs_operations_total", f + ', op="fsync"', "job_id, user"), "short"),
            ], sort_by="Written"),
            timeseries("Write latency p99 by job", "99 % of write calls took less.",
                       [target(quantile(0.99, f + ', op="write"', "job_id"), "job {{job_id}}")], "s"),
            timeseries("Written per node", "Bytes written per second, by node.",
                       [target(rate_sum("vnfs_write_bytes_total", f, "instance"), "{{instance}}")],
                       "Bps", stack=True),
        ])


def users_jobs():
    f = USER_FILTER
    # A job is doing NFS I/O while its operation counters grow, or while new
    # ones appear: a short job's counters are born with their final values,
    # which rate() alone does not see.  "New" means not seen in the hour
    # before, so that a failed scrape does not make old series look new.
    operations = f"vnfs_operations_total{{{f}}}"
    active_jobs = (f"count by (user) ("
                   f"sum by (user, job_id) (rate({operations}[{RATE}])) > 0"
                   f" or sum by (user, job_id) ({operations} unless "
                   f"last_over_time({operations}[1h] offset {RATE})))")
    return dashboard(
        "vnfs-users-jobs", "vnfs: users running several jobs at once",
        "Users with several jobs doing NFS I/O at the same time: a job counts "
        "while it makes NFS operations (its counters grow, or new operations appear).",
        [instance_variable(), user_variable(),
         custom_variable("min_jobs", "At least (jobs)", ["2", "3", "5", "10"], "2")],
        [
            stat("Users with at least $min_jobs jobs doing I/O now",
                 "Users with at least $min_jobs jobs making NFS operations at the moment.",
                 f"count(({active_jobs}) >= $min_jobs) or vector(0)", "short"),
            timeseries("Jobs doing NFS I/O, per user", "Jobs of each user making NFS operations.",
                       [target(active_jobs, "{{user}}")], "short"),
            table("Most jobs at once, per user",
                  "The largest number of jobs each user had doing NFS I/O at the same time "
                  "in the time range (users below the threshold are left out).", [
                      ("Jobs at once", f"max_over_time(({active_jobs})[{RANGE}:$__interval]) >= $min_jobs",
                       "short"),
                  ], sort_by="Jobs at once"),
            timeseries("Throughput per user", "Bytes read and written per second, by user.",
                       [target(rate_sum("vnfs_write_bytes_total", f, "user"), "{{user}} write", "A"),
                        target(rate_sum("vnfs_read_bytes_total", f, "user"), "{{user}} read", "B")],
                       "Bps"),
            table("Jobs of each user", "Totals in the time range.", [
                ("Written", job_total("vnfs_write_bytes_total", f, "user, job_id"), "bytes"),
                ("Read", job_total("vnfs_read_bytes_total", f, "user, job_id"), "bytes"),
                ("Operations", job_total("vnfs_operations_total", f, "user, job_id"), "short"),
            ], sort_by="Operations"),
        ])


def job_stats(side, variable):
    """Job A's (or B's) totals: [written, read], [operations, failed]."""
    f = f'instance=~"$instance", job_id=~"${variable}"'
    return (
        [stat(f"Job {side}: bytes written", f"Job ${variable}, in the time range.",
              job_total("vnfs_write_bytes_total", f, ""), "bytes"),
         stat(f"Job {side}: bytes read", f"Job ${variable}, read() in the time range.",
              job_total("vnfs_read_bytes_total", f, ""), "bytes")],
        [stat(f"Job {side}: operations", f"Job ${variable}, in the time range.",
              job_total("vnfs_operations_total", f, ""), "short"),
         stat(f"Job {side}: failed operations", f"Job ${variable}, in the time range.",
              job_total("vnfs_operation_errors_total", f, ""), "short")],
    )


def compare_jobs():
    a_bytes, a_operations = job_stats("A", "job_a")
    b_bytes, b_operations = job_stats("B", "job_b")
    # Two lines of four stats: job A on the left half, job B on the right.
    stats = a_bytes + b_bytes + a_operations + b_operations
    f_both = 'instance=~"$instance", job_id=~"$job_a|$job_b"'
    return dashboard(
        "vnfs-compare-jobs", "vnfs: compare two jobs",
        "Two jobs side by side: why is this run slower than that one?",
        [instance_variable(),
         query_variable("job_a", "Job A", 'label_values(vnfs_operations_total{instance=~"$instance"}, job_id)',
                        multi=False, include_all=False),
         query_variable("job_b", "Job B", 'label_values(vnfs_operations_total{instance=~"$instance"}, job_id)',
                        multi=False, include_all=False)],
        stats + [
            timeseries("Write throughput", "Bytes written per second, job A and job B.",
                       [target(rate_sum("vnfs_write_bytes_total", f_both, "job_id"), "job {{job_id}}")],
                       "Bps"),
            timeseries("Read throughput", "Bytes read per second, job A and job B.",
                       [target(rate_sum("vnfs_read_bytes_total", f_both, "job_id"), "job {{job_id}}")],
                       "Bps"),
            timeseries("Operations per second", "job A and job B, by operation.",
                       [target(rate_sum("vnfs_operations_total", f_both, "job_id, op"),
                               "job {{job_id}} {{op}}")], "ops"),
            timeseries("Latency p99", "99 % of each job's operations took less, by operation.",
                       [target(quantile(0.99, f_both, "job_id, op"), "job {{job_id}} {{op}}")], "s"),
            table("Operations side by side", "Totals in the time range, by operation.", [
                ("Count", job_total("vnfs_operations_total", f_both, "job_id, op"), "short"),
                ("Errors", job_total("vnfs_operation_errors_total", f_both, "job_id, op"), "short"),
                ("Time", job_total("vnfs_operation_duration_seconds_sum", f_both, "job_id, op"), "s"),
            ], sort_by="Count"),
        ])


def operations():
    f = STEP_FILTER + ', op=~"$op"'
    op = query_variable("op", "Operation",
                        'label_values(vnfs_operations_total{instance=~"$instance", job_id=~"$job_id"}, op)')
    calls = rate_sum("vnfs_operations_total", f, "op")
    errors = rate_sum("vnfs_operation_errors_total", f, "op")
    mean_latency = (f"{job_total('vnfs_operation_duration_seconds_sum', f, 'op')} / "
                    f"{job_total('vnfs_operation_duration_seconds_count', f, 'op')}")
    helper = 'instance=~"$instance"'
    return dashboard(
        "vnfs-operations", "vnfs: operations, errors and latency",
        "Success and error rates and latency percentiles of each NFS operation, "
        "and the health of the helpers.",
        [instance_variable(), user_variable(), job_variable(), op],
        [
            timeseries("Successful operations per second", "By operation.",
                       [target(f"{calls} - {errors}", "{{op}}")], "ops", stack=True),
            timeseries("Failed operations per second", "By operation.",
                       [target(errors, "{{op}}")], "ops", stack=True),
            timeseries("Error ratio", "Failed operations / all operations, by operation.",
                       [target(f"{errors} / {calls}", "{{op}}")], "percentunit"),
            timeseries("Latency percentiles", "p50, p90 and p99 of each operation's duration.",
                       [target(quantile(0.5, f, "op"), "{{op}} p50", "A"),
                        target(quantile(0.9, f, "op"), "{{op}} p90", "B"),
                        target(quantile(0.99, f, "op"), "{{op}} p99", "C")], "s"),
            table("Operations in the time range", "Count, errors and mean duration per operation.", [
                ("Count", job_total("vnfs_operations_total", f, "op"), "short"),
                ("Errors", job_total("vnfs_operation_errors_total", f, "op"), "short"),
                ("Mean duration", mean_latency, "s"),
            ], sort_by="Count"),
            row("Helpers"),
            # Over the range, as the other tables: a bare instant query finds
            # nothing right after a failed scrape (Prometheus marks every
            # series of the target stale then), seen in a loaded CI trial.
            table("Probe attach method", "How each node's helper attached each operation's probes "
                  "in the time range.", [
                      ("Attached", f"last_over_time(vnfs_helper_attach_method{{{helper}}}[{RANGE}])",
                       "short"),
                  ]),
            timeseries("Collection time", "How long each helper took to read the BPF maps.",
                       [target(f"vnfs_helper_collection_duration_seconds{{{helper}}}", "{{instance}}")], "s"),
            timeseries("Full maps and dropped records", "Counts lost to full BPF maps, to threads "
                       "whose state the probes could not keep, or to failed outputs (should stay at 0).",
                       [target(f"sum by (instance, map) (rate(vnfs_helper_map_full_total{{{helper}}}[{RATE}]))",
                               "{{instance}} {{map}} full", "A"),
                        target(f"sum by (instance, sink) (rate(vnfs_helper_dropped_records_total{{{helper}}}[{RATE}]))",
                               "{{instance}} {{sink}} dropped", "B"),
                        target(f"sum by (instance) (rate(vnfs_helper_uncounted_operations_total{{{helper}}}[{RATE}]))",
                               "{{instance}} uncounted", "C")], "ops"),
            timeseries("Active steps", "Job steps each helper counts.",
                       [target(f"vnfs_helper_active_steps{{{helper}}}", "{{instance}}")], "short"),
        ])


def workload_columns(total):
    """The Written, Read, Operations and Errors columns of a totals table,
    each total(family)."""
    return [("Written", total("vnfs_write_bytes_total"), "bytes"),
            ("Read", total("vnfs_read_bytes_total"), "bytes"),
            ("Operations", total("vnfs_operations_total"), "short"),
            ("Errors", total("vnfs_operation_errors_total"), "short")]


def kubernetes_stats(f):
    whom = "the selected containers"
    return [
        stat("Bytes written", f"Bytes {whom} wrote to NFS in the time range.",
             job_total("vnfs_write_bytes_total", f, ""), "bytes"),
        stat("Bytes read", f"Bytes {whom} read from NFS with read() in the time range.",
             job_total("vnfs_read_bytes_total", f, ""), "bytes"),
        stat("NFS operations", "Operations of every kind in the time range.",
             job_total("vnfs_operations_total", f, ""), "short"),
        stat("Failed operations", "Operations that returned an error in the time range.",
             job_total("vnfs_operation_errors_total", f, ""), "short"),
    ]


def kubernetes_tables(f):
    pod_bytes = (f"{job_total('vnfs_write_bytes_total', f, 'pod')} + "
                 f"{job_total('vnfs_read_bytes_total', f, 'pod')}")
    namespaces = table("Namespaces", "Each namespace's totals in the time range, all its pods together.",
                       workload_columns(lambda family: namespace_total(family, f)), sort_by="Written")
    top = table("Top $top pods by bytes", "Bytes read and written in the time range, largest first.", [
        ("Bytes", f"sort_desc(topk($top, {pod_bytes}))", "bytes")], sort_by="Bytes")
    namespaces["width"] = top["width"] = 12
    return [namespaces, top]


def kubernetes_graphs(f):
    return [
        timeseries("Throughput per namespace", "Bytes read and written per second, by namespace.",
                   [target(namespace_rate("vnfs_write_bytes_total", f), "{{namespace}} write", "A"),
                    target(namespace_rate("vnfs_read_bytes_total", f), "{{namespace}} read", "B")], "Bps"),
        timeseries("Throughput per pod", "Bytes read and written per second, by pod.",
                   [target(rate_sum("vnfs_write_bytes_total", f, "pod"), "{{pod}} write", "A"),
                    target(rate_sum("vnfs_read_bytes_total", f, "pod"), "{{pod}} read", "B")], "Bps"),
        timeseries("Throughput per container", "Bytes read and written per second, by container.",
                   [target(rate_sum("vnfs_write_bytes_total", f, "pod, container"),
                           "{{pod}} {{container}} write", "A"),
                    target(rate_sum("vnfs_read_bytes_total", f, "pod, container"),
                           "{{pod}} {{container}} read", "B")], "Bps"),
        timeseries("Write latency p99 per container", "99 % of each container's write calls took less.",
                   [target(quantile(0.99, f + ', op="write"', "pod, container"),
                           "{{pod}} {{container}}")], "s"),
        timeseries("Operations per second per pod", "By pod and operation.",
                   [target(rate_sum("vnfs_operations_total", f, "pod, op"), "{{pod}} {{op}}")],
                   "ops", stack=True),
        timeseries("Failed operations per second per pod", "Operations that returned an error, by pod.",
                   [target(rate_sum("vnfs_operation_errors_total", f, "pod"), "{{pod}}")], "ops",
                   stack=True),
    ]


def kubernetes_detail_tables(f):
    return [
        table("Pods", "Each pod's totals in the time range, all its containers together.",
              workload_columns(lambda family: job_total(family, f, "pod")), sort_by="Written"),
        table("Containers", "Each container's totals in the time range.",
              workload_columns(lambda family: job_total(family, f, "pod, container, user")),
              sort_by="Written"),
        table("Operations per pod", "Count, errors and time of each operation in the time range.", [
            ("Count", job_total("vnfs_operations_total", f, "pod, op"), "short"),
            ("Errors", job_total("vnfs_operation_errors_total", f, "pod, op"), "short"),
            ("Time", job_total("vnfs_operation_duration_seconds_sum", f, "pod, op"), "s"),
        ], sort_by="Count"),
    ]


def kubernetes():
    f = POD_FILTER
    return dashboard(
        "vnfs-kubernetes", "vnfs: Kubernetes pods",
        "What Kubernetes workloads did to NFS, by namespace, pod and container "
        "(containers registered by vnfs-register, e.g. as an OCI hook).",
        [instance_variable(), namespace_variable(), pod_variable(), container_variable(),
         custom_variable("top", "Pods shown", ["5", "10", "20", "50"], "10")],
        kubernetes_stats(f) + kubernetes_tables(f) + kubernetes_graphs(f) + kubernetes_detail_tables(f),
        tags=("kubernetes",))


def rpc_quantile(q, family, filter_text, by):
    return (f"histogram_quantile({q}, sum by ({by}, le) "
            f"(rate({family}_bucket{{{filter_text}}}[{RATE}])))")


def server_view():
    f = STEP_FILTER
    # NFSv4.2 clients read with READ_PLUS where the server has it.
    reads = f'{f}, procedure=~"READ|READ_PLUS"'
    node = 'instance=~"$instance"'
    # What the job's read() and mmap faults got, against what the server
    # sent for it in READ replies (RPC headers included): below 1 the page
    # cache served the rest, near 1 every byte came over the wire.
    read_rate = (f"(sum by (job_id) (rate(vnfs_read_bytes_total{{{f}}}[{RATE}])) + "
                 f"sum by (job_id) (rate(vnfs_mmap_read_bytes_total{{{f}}}[{RATE}])))")
    read_total = (f"({job_total('vnfs_read_bytes_total', f, '')} + "
                  f"{job_total('vnfs_mmap_read_bytes_total', f, '')})")
    mean_execute = (f"{job_total('vnfs_rpc_execute_seconds_total', f, 'procedure')} / "
                    f"{job_total('vnfs_rpcs_total', f, 'procedure')}")
    node_total = lambda family: job_total(family, node, "instance, owner, mount, procedure")
    return dashboard(
        "vnfs-server-view", "vnfs — server view of a job",
        "What the selected jobs asked of the NFS servers: RPCs per procedure, bytes on "
        "the wire, round-trip and queueing times, retransmissions, timeouts and errors, "
        "how much of their reads the page cache served; and the RPCs of no job on the "
        "node (the mounts' background, processes in no job).",
        [instance_variable(), user_variable(), job_variable()],
        [
            stat("RPCs", "NFS RPCs of the selected jobs that ended in the time range.",
                 job_total("vnfs_rpcs_total", f, ""), "short"),
            stat("Bytes sent to the servers", "RPC requests, headers included, in the time range.",
                 job_total("vnfs_rpc_sent_bytes_total", f, ""), "bytes"),
            stat("Bytes received from the servers", "RPC replies, headers included, in the time range.",
                 job_total("vnfs_rpc_received_bytes_total", f, ""), "bytes"),
            stat("Read from the server per byte read",
                 "Bytes of READ (and READ_PLUS) replies per byte the jobs read (read() and mmap) in the time "
                 "range: near 1 every byte came from the server, below 1 the page cache "
                 "served the rest.",
                 f"{job_total('vnfs_rpc_received_bytes_total', reads, '')} / {read_total}",
                 "percentunit"),
            timeseries("RPCs per second by procedure", "All selected jobs together.",
                       [target(rate_sum("vnfs_rpcs_total", f, "procedure"), "{{procedure}}")],
                       "ops", stack=True),
            timeseries("Bytes on the wire", "Bytes per second the jobs' RPCs sent and received, "
                       "RPC headers included.",
                       [target(rate_sum("vnfs_rpc_sent_bytes_total", f, "job_id"), "job {{job_id}} sent", "A"),
                        target(rate_sum("vnfs_rpc_received_bytes_total", f, "job_id"),
                               "job {{job_id}} received", "B")], "Bps"),
            timeseries("Round trip p50 and p99 by procedure",
                       "Last send to reply of each RPC: half and 99 % of them took less.",
                       [target(rpc_quantile(0.5, "vnfs_rpc_rtt_seconds", f, "procedure"),
                               "{{procedure}} p50", "A"),
                        target(rpc_quantile(0.99, "vnfs_rpc_rtt_seconds", f, "procedure"),
                               "{{procedure}} p99", "B")], "s"),
            timeseries("Backlog p99 by procedure",
                       "Time RPCs waited in the client's transport queue before their first "
                       "send: 99 % waited less (a saturated transport or too few slots).",
                       [target(rpc_quantile(0.99, "vnfs_rpc_backlog_seconds", f, "procedure"),
                               "{{procedure}}")], "s"),
            timeseries("Retransmissions and major timeouts", "Per second, by procedure (should stay at 0).",
                       [target(rate_sum("vnfs_rpc_retransmissions_total", f, "procedure"),
                               "{{procedure}} retransmissions", "A"),
                        target(rate_sum("vnfs_rpc_major_timeouts_total", f, "procedure"),
                               "{{procedure}} major timeouts", "B")], "ops"),
            timeseries("Failed RPCs by kind", "RPCs that ended with an error status, per second, "
                       "by procedure and kind (a kind appears with its first error).",
                       [target(rate_sum("vnfs_rpc_errors_total", f, "procedure, kind"),
                               "{{procedure}} {{kind}}")], "ops", stack=True),
            timeseries("Reads: the application and the server",
                       "Bytes per second the jobs read (read() and mmap) and bytes of READ "
                       "and READ_PLUS replies the servers sent for them.",
                       [target(read_rate, "job {{job_id}} read by the job", "A"),
                        target(rate_sum("vnfs_rpc_received_bytes_total", reads, "job_id"),
                               "job {{job_id}} READ replies", "B")], "Bps"),
            timeseries("Read from the server per byte read, over time",
                       "READ and READ_PLUS reply bytes / bytes read by the job, per second: below 1 the page "
                       "cache served the rest.",
                       [target(f"{rate_sum('vnfs_rpc_received_bytes_total', reads, 'job_id')} / {read_rate}",
                               "job {{job_id}}")], "percentunit"),
            table("Procedures in the time range", "Each procedure's RPCs, bytes, retransmissions "
                  "and mean execution time (start to end, queueing included).", [
                      ("RPCs", job_total("vnfs_rpcs_total", f, "procedure"), "short"),
                      ("Sent", job_total("vnfs_rpc_sent_bytes_total", f, "procedure"), "bytes"),
                      ("Received", job_total("vnfs_rpc_received_bytes_total", f, "procedure"), "bytes"),
                      ("Retransmissions", job_total("vnfs_rpc_retransmissions_total", f, "procedure"), "short"),
                      ("Mean execution", mean_execute, "s"),
                  ], sort_by="RPCs"),
            row("Node: RPCs of no job"),
            timeseries("RPCs of no job per second",
                       "By node, owner (background: the mount's own, such as lease renewal, "
                       "SEQUENCE and DELEGRETURN by the state manager; unattributed: processes "
                       "in no job) and procedure.",
                       [target(f"sum by (instance, owner, procedure) "
                               f"(rate(vnfs_node_rpcs_total{{{node}}}[{RATE}]))",
                               "{{instance}} {{owner}} {{procedure}}")], "ops", stack=True),
            timeseries("Bytes on the wire of no job", "Bytes per second RPCs of no job sent and "
                       "received, by node and owner.",
                       [target(f"sum by (instance, owner) "
                               f"(rate(vnfs_node_rpc_sent_bytes_total{{{node}}}[{RATE}]))",
                               "{{instance}} {{owner}} sent", "A"),
                        target(f"sum by (instance, owner) "
                               f"(rate(vnfs_node_rpc_received_bytes_total{{{node}}}[{RATE}]))",
                               "{{instance}} {{owner}} received", "B")], "Bps"),
            table("RPCs of no job in the time range", "Counted since each helper started, by "
                  "node, owner, mount and procedure.", [
                      ("RPCs", node_total("vnfs_node_rpcs_total"), "short"),
                      ("Sent", node_total("vnfs_node_rpc_sent_bytes_total"), "bytes"),
                      ("Received", node_total("vnfs_node_rpc_received_bytes_total"), "bytes"),
                      ("Retransmissions", node_total("vnfs_node_rpc_retransmissions_total"), "short"),
                  ], sort_by="RPCs"),
        ])


# ---- the cluster's history in PostgreSQL (docs/SCHEMA.md, "PostgreSQL") ----------
#
# These panels read the database every node's helper writes into
# ([postgresql], docs/OUTPUTS.md) through Grafana's PostgreSQL data source
# (plugin grafana-postgresql-datasource, Grafana 10.4 and later; connect it
# as a vnfs_admin role, docs/INSTALL.md).  tests/unit/test_postgresql.c runs
# every query below, variables filled in as Grafana fills them, against a
# real server holding known records, and checks each result exactly.
#
# A step's I/O in the time range is exact, as the Prometheus dashboards'
# last_over_time() is: step_samples holds each step's cumulative counters
# at every interval, so the range's share is its last sample in the range
# less its last one before.  Variables are expanded with ${name:sqlstring}:
# users and tag names are text from users, quoted and escaped by Grafana.

POSTGRESQL = {"type": "grafana-postgresql-datasource", "uid": "${datasource}"}
POSTGRESQL_SOURCE = ("grafana-postgresql-datasource", "PostgreSQL", "10.4.0")
SAMPLE_COUNTERS = ("read_count", "read_bytes", "write_count", "write_bytes", "metadata_count",
                   "errors", "time_ns", "rpcs", "bytes_sent", "bytes_received")
STEP_KEY = "source, job, node, part"
# How vnfs-report names a job: Slurm's bare, another source's as SOURCE:JOB.
JOB_NAME = "CASE WHEN source = 'slurm' THEN job ELSE source || ':' || job END"

STEP_IO = (
    "WITH last_in_range AS (\n"
    f"  SELECT DISTINCT ON ({STEP_KEY}) {STEP_KEY}, \"user\", sample_time_ms, "
    + ", ".join(SAMPLE_COUNTERS) + "\n"
    "  FROM step_samples\n"
    "  WHERE sample_time_ms BETWEEN $__from AND $__to AND \"user\" IN (${user:sqlstring})\n"
    f"  ORDER BY {STEP_KEY}, sample_time_ms DESC\n"
    "), step_io AS (\n"
    f"  SELECT r.source, r.job, r.node, r.part, r.\"user\", "
    + ", ".join(f"r.{c} - coalesce(b.{c}, 0) AS {c}" for c in SAMPLE_COUNTERS) + "\n"
    "  FROM last_in_range r LEFT JOIN LATERAL (\n"
    "    SELECT " + ", ".join(SAMPLE_COUNTERS) + " FROM step_samples b\n"
    "    WHERE (b.source, b.job, b.node, b.part) = (r.source, r.job, r.node, r.part)\n"
    "      AND b.sample_time_ms < $__from\n"
    "    ORDER BY b.sample_time_ms DESC LIMIT 1) b ON true\n"
    ")\n")
MOVED = "sum(read_bytes + write_bytes)"


def sql_target(sql, fmt="table", ref="A"):
    return {"datasource": POSTGRESQL, "editorMode": "code", "format": fmt, "rawQuery": True,
            "rawSql": sql, "refId": ref}


def sql_table(title, description, sql, units, width=24):
    """A table of one query's columns; units: {column: Grafana unit}."""
    return {
        "type": "table", "title": title, "description": description,
        "datasource": POSTGRESQL, "targets": [sql_target(sql)],
        "fieldConfig": {"defaults": {"unit": "short"}, "overrides": [
            {"matcher": {"id": "byName", "options": column},
             "properties": [{"id": "unit", "value": unit}]}
            for column, unit in units.items()]},
        "options": {"showHeader": True, "cellHeight": "sm", "footer": {"show": False}},
        "width": width,
    }


def sql_timeseries(title, description, sql, unit):
    panel = timeseries(title, description, [], unit)
    panel["datasource"] = POSTGRESQL
    panel["targets"] = [sql_target(sql, "time_series")]
    panel["width"] = 24
    return panel


def sql_variable(name, label, query):
    return {
        "name": name, "label": label, "type": "query", "datasource": POSTGRESQL,
        "definition": query, "query": query, "current": {}, "hide": 0,
        "includeAll": True, "multi": True, "options": [], "refresh": 2, "regex": "", "sort": 1,
    }


IO_UNITS = {"Read": "bytes", "Written": "bytes", "NFS time": "ns"}


def cluster_history():
    return dashboard(
        "vnfs-cluster-history", "vnfs: the cluster's history (PostgreSQL)",
        "Every job of every node from the cluster's PostgreSQL history: the heaviest "
        "jobs, and I/O by user, by project tag and by Kubernetes namespace, in the time "
        "range (each step's share of it, exact).",
        [sql_variable("user", "User", 'SELECT DISTINCT "user" FROM jobs ORDER BY 1'),
         sql_variable("tag", "Tag", "SELECT DISTINCT name FROM step_tags ORDER BY 1")
         | {"includeAll": False, "multi": False},
         sql_variable("namespace", "Namespace",
                      "SELECT DISTINCT split_part(job, '/', 1) FROM jobs"
                      " WHERE source = 'kubernetes' ORDER BY 1")],
        [
            sql_timeseries(
                "Bytes per second, all nodes", "Read and written by the selected users' jobs, "
                "per minute.",
                "SELECT to_timestamp(bucket * 60) AS time, sum(read_delta) / 60 AS \"read\",\n"
                "  sum(write_delta) / 60 AS \"written\"\n"
                "FROM (\n"
                "  SELECT floor(sample_time_ms / 60000) AS bucket, sample_time_ms,\n"
                "    read_bytes - lag(read_bytes, 1, 0::bigint) OVER step AS read_delta,\n"
                "    write_bytes - lag(write_bytes, 1, 0::bigint) OVER step AS write_delta\n"
                "  FROM step_samples\n"
                "  WHERE \"user\" IN (${user:sqlstring})\n"
                # A step's sample before the range, for the first one's
                # difference: the helpers write one each interval.
                "    AND sample_time_ms BETWEEN $__from - 3600000 AND $__to\n"
                f"  WINDOW step AS (PARTITION BY {STEP_KEY} ORDER BY sample_time_ms)\n"
                ") AS deltas\n"
                "WHERE sample_time_ms >= $__from\n"
                "GROUP BY bucket ORDER BY bucket", "Bps"),
            sql_table(
                "Heaviest jobs", "The 20 jobs that moved the most bytes in the time range, "
                "over all their nodes.",
                STEP_IO +
                f"SELECT {JOB_NAME} AS \"Job\", min(\"user\") AS \"User\",\n"
                "  count(DISTINCT node) AS \"Nodes\", sum(read_bytes) AS \"Read\",\n"
                "  sum(write_bytes) AS \"Written\", sum(metadata_count) AS \"Metadata calls\",\n"
                "  sum(errors) AS \"Errors\", sum(time_ns) AS \"NFS time\", sum(rpcs) AS \"RPCs\"\n"
                "FROM step_io GROUP BY source, job\n"
                f"ORDER BY {MOVED} DESC, source, job LIMIT 20", IO_UNITS),
            sql_table(
                "By user", "Each user's jobs in the time range, over all nodes.",
                STEP_IO +
                "SELECT \"user\" AS \"User\", count(DISTINCT (source, job)) AS \"Jobs\",\n"
                "  sum(read_bytes) AS \"Read\", sum(write_bytes) AS \"Written\",\n"
                "  sum(metadata_count) AS \"Metadata calls\", sum(time_ns) AS \"NFS time\"\n"
                "FROM step_io GROUP BY \"user\"\n"
                f"ORDER BY {MOVED} DESC, \"user\"", IO_UNITS, width=12),
            sql_table(
                "By the tag's value", "The jobs grouped by their value of the chosen tag "
                "(--vnfs-tags, or a pod's tag variables); (none) for jobs without it.",
                STEP_IO +
                "SELECT coalesce(t.value, '(none)') AS \"Value\",\n"
                "  count(DISTINCT (io.source, io.job)) AS \"Jobs\",\n"
                "  count(DISTINCT io.\"user\") AS \"Users\", sum(io.read_bytes) AS \"Read\",\n"
                "  sum(io.write_bytes) AS \"Written\", sum(io.time_ns) AS \"NFS time\"\n"
                "FROM step_io io\n"
                "LEFT JOIN steps s ON (s.source, s.job, s.node, s.part) ="
                " (io.source, io.job, io.node, io.part)\n"
                "LEFT JOIN step_tags t ON t.step = s.id AND t.name = ${tag:sqlstring}\n"
                "GROUP BY 1 ORDER BY sum(io.read_bytes + io.write_bytes) DESC, 1", IO_UNITS,
                width=12),
            sql_table(
                "Kubernetes pods", "The pods of the chosen namespaces, over their containers "
                "and nodes.",
                STEP_IO +
                "SELECT split_part(job, '/', 1) AS \"Namespace\","
                " split_part(job, '/', 2) AS \"Pod\",\n"
                "  count(DISTINCT part) AS \"Containers\", count(DISTINCT node) AS \"Nodes\",\n"
                "  sum(read_bytes) AS \"Read\", sum(write_bytes) AS \"Written\","
                " sum(time_ns) AS \"NFS time\"\n"
                "FROM step_io WHERE source = 'kubernetes'"
                " AND split_part(job, '/', 1) IN (${namespace:sqlstring})\n"
                f"GROUP BY job ORDER BY {MOVED} DESC, job", IO_UNITS),
        ], tags=("slurm", "kubernetes", "postgresql"), source=POSTGRESQL_SOURCE)


DASHBOARDS = {
    "vnfs-job-io.json": job_io,
    "vnfs-writes-by-process.json": writes_by_process,
    "vnfs-writes-by-job.json": writes_by_job,
    "vnfs-users-jobs.json": users_jobs,
    "vnfs-compare-jobs.json": compare_jobs,
    "vnfs-operations.json": operations,
    "vnfs-kubernetes.json": kubernetes,
    "vnfs-server-view.json": server_view,
    # Not Prometheus's: their own folder, so that the PromQL checks
    # (tests/package/dashboards-lint, tests/guest/suites/dashboards.sh) skip it.
    "postgresql/vnfs-cluster-history.json": cluster_history,
}


def main():
    directory = os.path.dirname(os.path.abspath(__file__))
    for name, build in DASHBOARDS.items():
        path = os.path.join(directory, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as out:
            json.dump(build(), out, indent=2, ensure_ascii=False)
            out.write("\n")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
