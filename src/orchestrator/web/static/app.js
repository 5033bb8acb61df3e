// The page's little JavaScript: answer buttons post JSON to the API; the inbox and a run's page
// poll the API (every second on a run's page). Agent text is only ever set with textContent.
"use strict";

async function post(url, body) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    credentials: "same-origin",
    body: JSON.stringify(body),
  });
  let data = {};
  try { data = await res.json(); } catch (e) { data = { error: res.statusText }; }
  return { ok: res.ok, status: res.status, data };
}

function resumeNote(resume) {
  if (!resume) return "";
  if (resume.started) return " The run is resuming in the background.";
  if (resume.held) return " The waiting runner picks it up now.";
  if (resume.command) return ` Continue with: ${resume.command}`;
  return "";
}

async function answer(card, body) {
  const status = card.querySelector(".status");
  card.querySelectorAll("button").forEach((b) => { b.disabled = true; });
  status.className = "status";
  status.textContent = "Sending…";
  const { ok, data } = await post(`/api/escalations/${card.dataset.esc}/answer`, body);
  if (ok) {
    card.classList.add("done");
    const esc = data.escalation;
    status.className = "status ok";
    status.textContent = `Answered: ${esc.response} (via ${esc.channel}).` + resumeNote(data.resume);
    card.querySelectorAll(".choices, form.reply").forEach((el) => el.remove());
  } else {
    status.className = "status bad";
    status.textContent = data.error || "The answer was not recorded.";
    if (data.escalation && data.escalation.status === "answered") {
      card.querySelectorAll(".choices, form.reply").forEach((el) => el.remove());
    } else {
      card.querySelectorAll("button").forEach((b) => { b.disabled = false; });
    }
  }
}

function wireCards() {
  document.querySelectorAll("article.esc").forEach((card) => {
    card.querySelectorAll("button.answer").forEach((btn) => {
      btn.addEventListener("click", () => {
        const body = {};
        body[btn.dataset.key] = btn.dataset.value;
        if (btn.dataset.value === "abort" && !confirm("Abort the whole run?")) return;
        answer(card, body);
      });
    });
    const form = card.querySelector("form.reply");
    if (form) {
      form.addEventListener("submit", (ev) => {
        ev.preventDefault();
        const text = form.elements.text.value.trim();
        if (text) answer(card, { text });
      });
    }
  });
}

async function getJSON(url) {
  const res = await fetch(url, { credentials: "same-origin" });
  if (!res.ok) throw new Error(res.statusText);
  return res.json();
}

function pollInbox() {
  const box = document.getElementById("inbox");
  const shown = new Set(box.dataset.ids ? box.dataset.ids.split(",") : []);
  setInterval(async () => {
    try {
      const data = await getJSON("/api/escalations");
      const fresh = data.escalations.some((e) => !shown.has(String(e.id)));
      if (!fresh) return;
      const typing = [...document.querySelectorAll("textarea")].some((t) => t.value.trim());
      if (typing) document.getElementById("news").hidden = false;
      else location.reload();
    } catch (e) { /* the server restarting: try again next time */ }
  }, 2000);
}

function fmtDuration(s) {
  if (s === null || s === undefined) return "-";
  s = Math.round(s);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

function fmtCost(c) {
  if (c === null || c === undefined) return "-";
  return c === 0 || c >= 0.01 ? `$${c.toFixed(2)}` : `$${c.toPrecision(2)}`;
}

function pollRun(runId) {
  const shape = (d) => JSON.stringify([
    d.tasks.map((t) => [t.task_id, t.attempts]),
    d.escalations.map((e) => [e.id, e.status]),
    d.resumes.length,
  ]);
  let known = null;
  const tick = async () => {
    try {
      const d = await getJSON(`/api/runs/${encodeURIComponent(runId)}`);
      if (known === null) known = shape(d);
      else if (shape(d) !== known && !document.querySelector("textarea:focus")) {
        location.reload();
        return;
      }
      const st = document.getElementById("run-status");
      st.textContent = d.run.status;
      st.className = `st st-${d.run.status}`;
      document.getElementById("run-held").textContent = d.held ? "a runner holds it" : "no runner holds it";
      d.tasks.forEach((t) => {
        const row = [...document.querySelectorAll("#tasks tr[data-task]")].find((r) => r.dataset.task === t.task_id);
        if (!row) return;
        const set = (f, v) => { const el = row.querySelector(`[data-f="${f}"]`); if (el) el.textContent = v; };
        set("status", t.status);
        row.querySelector('[data-f="status"]').className = `st st-${t.status}`;
        set("attempts", String(t.attempts));
        set("duration", fmtDuration(t.duration_s));
        set("cost", fmtCost(t.cost_usd));
        set("last_error", t.last_error || "");
      });
    } catch (e) { /* try again next second */ }
  };
  setInterval(tick, 1000);
  setInterval(() => {
    document.querySelectorAll("tr.running[data-started]").forEach((tr) => {
      tr.querySelector(".elapsed").textContent = fmtDuration(Date.now() / 1000 - Number(tr.dataset.started));
    });
  }, 1000);
}

document.addEventListener("DOMContentLoaded", () => {
  wireCards();
  if (document.getElementById("inbox")) pollInbox();
  if (document.body.dataset.run) pollRun(document.body.dataset.run);
});
