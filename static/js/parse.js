// Parsing of user data: token vectors as JSON or CSV text, and NumPy .npy files.
// Pure functions: each returns a rectangular matrix (array of rows of numbers) or throws a
// ParseError whose `key` and `params` name the line/row and cell at fault (for i18n).

export class ParseError extends Error {
  constructor(key, params) {
    super(`${key} ${JSON.stringify(params)}`);
    this.key = key;
    this.params = params;
  }
}

function checkRows(rows, unit) {
  if (rows.length === 0) throw new ParseError("parse.empty", {});
  const width = rows[0].length;
  rows.forEach((row, i) => {
    if (row.length !== width) {
      throw new ParseError("parse.ragged", { unit, line: i + 1, count: row.length, width });
    }
  });
  return rows;
}

function toNumber(raw, line, cell, unit) {
  const text = String(raw).trim();
  const x = typeof raw === "number" ? raw : text === "" ? NaN : Number(text);
  if (!Number.isFinite(x)) throw new ParseError("parse.not_number", { unit, line, cell, value: text.slice(0, 20) });
  return x;
}

/** CSV: one token a line, numbers separated by commas, semicolons, tabs or spaces. */
export function parseCsv(text) {
  const rows = [];
  const lines = text.split(/\r?\n/);
  lines.forEach((line, i) => {
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) return;
    const cells = trimmed.split(/\s*[,;\t]\s*|\s+/);
    rows.push(cells.map((c, j) => toNumber(c, i + 1, j + 1, "line")));
  });
  return checkRows(rows, "line");
}

/** JSON: [[...], [...]] (one inner array a token), or a flat [...] for one token. */
export function parseJson(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const match = /line (\d+)/.exec(err.message) || /position (\d+)/.exec(err.message);
    let line = 1;
    if (match && /position/.test(match[0])) line = text.slice(0, Number(match[1])).split("\n").length;
    else if (match) line = Number(match[1]);
    throw new ParseError("parse.bad_json", { line });
  }
  if (!Array.isArray(value)) throw new ParseError("parse.not_array", {});
  const rows = value.every((v) => !Array.isArray(v)) ? [value] : value;
  return checkRows(rows.map((row, i) => {
    if (!Array.isArray(row)) throw new ParseError("parse.not_row", { line: i + 1 });
    return row.map((v, j) => toNumber(v, i + 1, j + 1, "row"));
  }), "row");
}

/** Text pasted or read from a .json/.csv file: JSON when it starts with "[". */
export function parseText(text) {
  return text.trim().startsWith("[") ? parseJson(text) : parseCsv(text);
}

const NPY_TYPES = {
  "<f4": [4, (v, o) => v.getFloat32(o, true)],
  "<f8": [8, (v, o) => v.getFloat64(o, true)],
  "<i4": [4, (v, o) => v.getInt32(o, true)],
  "<i8": [8, (v, o) => Number(v.getBigInt64(o, true))],
  "<f2": null,
};

/** A NumPy .npy file (format 1.0-3.0, little-endian float32/float64/int32/int64, 1-D or 2-D). */
export function parseNpy(buffer) {
  const bytes = new Uint8Array(buffer);
  const magic = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59];
  if (bytes.length < 10 || magic.some((b, i) => bytes[i] !== b)) throw new ParseError("parse.npy_magic", {});
  const view = new DataView(buffer);
  const major = bytes[6];
  const headerLength = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const start = major === 1 ? 10 : 12;
  const header = new TextDecoder("latin1").decode(bytes.slice(start, start + headerLength));
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*True/.test(header);
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (!descr || shapeText === undefined) throw new ParseError("parse.npy_header", {});
  const type = NPY_TYPES[descr.replace("|", "<")];
  if (!type) throw new ParseError("parse.npy_dtype", { dtype: descr });
  const shape = shapeText.split(",").map((s) => s.trim()).filter(Boolean).map(Number);
  if (shape.length < 1 || shape.length > 2) throw new ParseError("parse.npy_ndim", { ndim: shape.length });
  const [rows, cols] = shape.length === 1 ? [1, shape[0]] : shape;
  const [size, read] = type;
  const offset = start + headerLength;
  // a shape with a zero (100000000 x 0) holds no numbers but would make 10^8 rows: refused
  // with the other shapes the file's bytes cannot hold, before a row is made
  if (!(Number.isSafeInteger(rows) && Number.isSafeInteger(cols)) || rows < 1 || cols < 1) {
    throw new ParseError("parse.empty", {});
  }
  if (bytes.length < offset + rows * cols * size) throw new ParseError("parse.npy_short", {});
  const out = [];
  for (let i = 0; i < rows; i++) {
    const row = [];
    for (let j = 0; j < cols; j++) {
      const index = fortran ? j * rows + i : i * cols + j;
      const x = read(view, offset + index * size);
      if (!Number.isFinite(x)) throw new ParseError("parse.not_number", { unit: "row", line: i + 1, cell: j + 1, value: String(x) });
      row.push(x);
    }
    out.push(row);
  }
  return checkRows(out, "row");
}
