// Conveniences only: every page works without this script.

// Copy buttons.
document.addEventListener("click", (event) => {
  const button = event.target.closest("button.copy");
  if (!button) return;
  const field = document.getElementById(button.dataset.copyTarget);
  if (!field) return;
  field.select();
  const done = () => { button.textContent = "Copied"; setTimeout(() => { button.textContent = "Copy"; }, 1500); };
  if (navigator.clipboard) {
    navigator.clipboard.writeText(field.value).then(done, () => { document.execCommand("copy"); done(); });
  } else {
    document.execCommand("copy");
    done();
  }
});

// Times: the page carries UTC; a person reads local time ("2026-11-24 18:20:05 (UTC+01:00)"), or in lists how
// long ago ("5 minutes ago"). The ISO time stays in the title, shown on hover.
const pad = (number) => String(number).padStart(2, "0");
const plural = (count, one, many) => (count === 1 ? `1 ${one}` : `${count} ${many}`);
function localText(date) {
  const offset = -date.getTimezoneOffset();
  const sign = offset < 0 ? "-" : "+";
  const zone = `UTC${sign}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())} (${zone})`;
}
function relativeText(date, now) {
  const seconds = Math.round((now - date) / 1000);
  const amount = Math.abs(seconds);
  let words;
  if (amount < 45) return seconds < 0 ? "in a moment" : "just now";
  if (amount < 3600) words = plural(Math.min(59, Math.ceil(amount / 60)), "minute", "minutes");
  else if (amount < 86400) words = plural(Math.floor(amount / 3600), "hour", "hours");
  else words = plural(Math.floor(amount / 86400), "day", "days");
  return seconds < 0 ? `in ${words}` : `${words} ago`;
}
function showTimes() {
  const now = Date.now();
  for (const element of document.querySelectorAll("time[datetime][data-show]")) {
    const date = new Date(element.getAttribute("datetime"));
    if (Number.isNaN(date.getTime())) continue;
    element.textContent = element.dataset.show === "relative" ? relativeText(date, now) : localText(date);
    // The ISO time stays in the title and in datetime; no aria-label, so a screen reader says what the screen shows.
    element.title = element.getAttribute("datetime");
  }
}
showTimes();
setInterval(showTimes, 30000);

// The add-integration form shows only the fields of the chosen type (without JavaScript, a button redraws it).
const kind = document.querySelector("#new-integration #type");
if (kind) {
  for (const button of document.querySelectorAll(".no-js-only")) button.hidden = true;
  const showFields = () => {
    for (const field of document.querySelectorAll("#new-integration [data-types]")) {
      field.hidden = !field.dataset.types.split(" ").includes(kind.value);
    }
  };
  kind.addEventListener("change", showFields);
  showFields();
}
