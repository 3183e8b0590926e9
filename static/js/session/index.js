// Class sessions on the page: the lecturer's "Start class session" (lecturer.js) and, on
// /join/{code}, the student's following page (student.js).
import { initLecturer } from "./lecturer.js";
import { initStudent } from "./student.js";

export function initSession(app) {
  const code = document.getElementById("session")?.dataset.joinCode;
  if (code) {
    document.getElementById("session-start").hidden = true;
    initStudent(app, code);
  } else {
    initLecturer(app);
  }
}
