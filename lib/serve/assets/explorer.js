// The attn explorer (explorer.html): translation, attention maps and a run's curves. Plain
// JavaScript and SVG/canvas, no library: the page is compiled into attn and must work offline,
// from attn-serve (it asks /v1/translate, /v1/attention, /v1/run) or from a file written by
// attn-dump-attention --html (its data embedded as JSON in #attn-data). The data's format:
// lib/serve/attention_json.h. Element ids the tests and users rely on: README.md, "Explorer".
'use strict';

const SVG_NS = 'http://www.w3.org/2000/svg';
const CSV_HEADER = 'sentence,kind,layer,head,query_pos,query_token,key_pos,key_token,weight';
// matplotlib's viridis at 11 even stops, interpolated linearly between them.
const VIRIDIS = ['#440154', '#482475', '#414487', '#355f8d', '#2a788e', '#21918c', '#22a884', '#44bf70',
                 '#7ad151', '#bddf26', '#fde725'].map(hex => [1, 3, 5].map(i => parseInt(hex.substr(i, 2), 16)));
const KIND_ORDER = ['enc_self', 'cross', 'dec_self'];

const state = {
  embedded: false,  // data from the page itself (attn-dump-attention --html)
  data: null,       // the attention document (attention_json.h)
  maps: null,       // "kind/layer/head" -> {queries, keys, texts, values} of the current sentence
  sentence: 0, kind: null, layer: 0, head: 0, units: 'pieces', showLinks: true,
  cursor: null,     // {q, k} of the heatmap's keyboard cursor
  matrix: null,     // what the focused views show (focusedMatrix)
  run: null, runKey: '', beam: 1,
};
const timings = {};  // performance.now() spans of the last draws, for tools/bench-explorer.py

const $ = id => document.getElementById(id);

function svgElement(name, attributes, parent) {
  const element = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attributes || {})) element.setAttribute(key, value);
  if (parent) parent.appendChild(element);
  return element;
}

function svgText(parent, x, y, text, attributes) {
  const element = svgElement('text', Object.assign({x: x, y: y}, attributes || {}), parent);
  element.textContent = text;
  return element;
}

function clearElement(element) {
  while (element.firstChild) element.removeChild(element.firstChild);
}

// ---- numbers -------------------------------------------------------------------------------

// printf's %.9g, the CSV's format (decode::append_weight), for weights the page computes.
function formatWeight(x) {
  if (x === 0) return '0';
  if (!isFinite(x)) return String(x);
  const [mantissa, exponentText] = x.toExponential(8).split('e');
  const exponent = parseInt(exponentText, 10);
  if (exponent < -4 || exponent >= 9) {
    const digits = mantissa.indexOf('.') >= 0 ? mantissa.replace(/\.?0+$/, '') : mantissa;
    return digits + 'e' + (exponent < 0 ? '-' : '+') + String(Math.abs(exponent)).padStart(2, '0');
  }
  const fixed = x.toFixed(8 - exponent);
  return fixed.indexOf('.') >= 0 ? fixed.replace(/\.?0+$/, '') : fixed;
}

function viridis(t) {
  const x = Math.min(1, Math.max(0, t)) * (VIRIDIS.length - 1);
  const i = Math.min(VIRIDIS.length - 2, Math.floor(x));
  const f = x - i;
  const c = [0, 1, 2].map(j => Math.round(VIRIDIS[i][j] + f * (VIRIDIS[i + 1][j] - VIRIDIS[i][j])));
  return 'rgb(' + c.join(',') + ')';
}

// A CSV field as the dump writes it (decode::csv_field).
function csvField(text) {
  return /[,"\t\r\n ]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
}

// ---- the data ------------------------------------------------------------------------------

function sentenceData() {
  return state.data ? state.data.sentences[state.sentence] : null;
}

// The sentence's maps by "kind/layer/head", weights as numbers and as the server's text.
function indexMaps(sentence) {
  const maps = {};
  for (const map of sentence.maps) {
    const texts = map.weights.length ? map.weights.split(' ') : [];
    maps[map.kind + '/' + map.layer + '/' + map.head] = {
      kind: map.kind, layer: map.layer, head: map.head, queries: map.queries, keys: map.keys,
      texts: texts, values: Float64Array.from(texts, Number)};
  }
  return maps;
}

// kind -> layer -> [heads], in the model's order.
function mapShape() {
  const shape = {};
  for (const map of Object.values(state.maps || {})) {
    shape[map.kind] = shape[map.kind] || {};
    (shape[map.kind][map.layer] = shape[map.kind][map.layer] || []).push(map.head);
  }
  return shape;
}

// The tokens labelling a kind's queries and keys, and their words.
function axes(sentence, kind) {
  const source = {tokens: sentence.source_tokens, words: sentence.source_words};
  const output = {tokens: sentence.target_tokens, words: sentence.target_words};
  const input = {tokens: sentence.decoder_input_tokens, words: sentence.decoder_input_words};
  if (kind === 'enc_self') return {query: source, key: source};
  return {query: output, key: kind === 'dec_self' ? input : source};
}

// Positions grouped for display: each piece alone, or the pieces of each word together (a
// piece of no word, such as </s>, stays alone), as attn-dump-attention --alignments words reads them.
function groups(axis, units) {
  const result = [];
  axis.tokens.forEach((token, position) => {
    const word = axis.words[position];
    const last = result[result.length - 1];
    if (units === 'words' && word >= 0 && last && last.word === word) {
      last.members.push(position);
      last.label += token;
    } else {
      result.push({word: units === 'words' ? word : -1, members: [position], label: token});
    }
  });
  if (units === 'words')
    for (const group of result) if (group.word >= 0) group.label = group.label.replace(/\u2581/g, ' ').trim();
  return result;
}

// One map (one head, or the mean of a layer's heads) as a matrix: queries x keys values.
function headMatrix(kind, layer, head) {
  if (head !== 'mean') return state.maps[kind + '/' + layer + '/' + head];
  const heads = mapShape()[kind][layer].map(h => state.maps[kind + '/' + layer + '/' + h]);
  const values = new Float64Array(heads[0].values.length);
  for (const map of heads) map.values.forEach((v, i) => { values[i] += v / heads.length; });
  return {kind: kind, layer: layer, head: 'mean', queries: heads[0].queries, keys: heads[0].keys, values: values,
          texts: Array.from(values, formatWeight)};
}

// What the focused views show: the map with its rows and columns grouped into words when asked
// (a word's query row is the mean of its pieces' rows, its key column the sum of its pieces'
// columns, as align::word_level; then every row still sums to one).
function displayMatrix(kind, layer, head, units) {
  const map = headMatrix(kind, layer, head);
  const axis = axes(sentenceData(), kind);
  const rows = groups({tokens: axis.query.tokens.slice(0, map.queries), words: axis.query.words}, units);
  const columns = groups({tokens: axis.key.tokens.slice(0, map.keys), words: axis.key.words}, units);
  if (units === 'pieces') return {map: map, rows: rows, columns: columns, values: map.values, texts: map.texts};
  const values = new Float64Array(rows.length * columns.length);
  rows.forEach((row, r) => columns.forEach((column, c) => {
    let sum = 0;
    for (const q of row.members) for (const k of column.members) sum += map.values[q * map.keys + k];
    values[r * columns.length + c] = sum / row.members.length;
  }));
  return {map: map, rows: rows, columns: columns, values: values, texts: Array.from(values, formatWeight)};
}

// The alignment links as (row, column) cells of the focused map (cross attention only): a link
// joins words or pieces (state.data.alignment.unit), drawn on every cell of their groups.
function linkCells(matrix) {
  const sentence = sentenceData();
  if (!state.showLinks || !state.data.alignment || matrix.map.kind !== 'cross') return [];
  const byWord = state.data.alignment.unit === 'words';
  const holds = (group, words, position) => group.members.some(m => (byWord ? words[m] : m) === position);
  const cells = [];
  for (const [s, t] of sentence.links)
    matrix.rows.forEach((row, r) => {
      if (!holds(row, sentence.target_words, t)) return;
      matrix.columns.forEach((column, c) => { if (holds(column, sentence.source_words, s)) cells.push([r, c]); });
    });
  return cells;
}

// ---- the focused heatmap -------------------------------------------------------------------

function labelWidth(groups) {
  return 10 + 7.5 * Math.min(24, Math.max(3, ...groups.map(g => g.label.length)));
}

function drawHeatmap() {
  const start = performance.now();
  const svg = $('heatmap');
  clearElement(svg);
  const m = state.matrix;
  const cell = Math.max(8, Math.min(28, Math.floor(560 / Math.max(m.rows.length, m.columns.length))));
  const left = labelWidth(m.rows), top = labelWidth(m.columns);
  const width = left + cell * m.columns.length + 4, height = top + cell * m.rows.length + 4;
  svg.setAttribute('width', width);
  svg.setAttribute('height', height);
  svg.setAttribute('viewBox', '0 0 ' + width + ' ' + height);
  svgElement('rect', {x: 0, y: 0, width: width, height: height, fill: '#ffffff'}, svg);
  const cells = svgElement('g', {transform: 'translate(' + left + ',' + top + ')'}, svg);
  for (let r = 0; r < m.rows.length; ++r)
    for (let c = 0; c < m.columns.length; ++c) {
      const i = r * m.columns.length + c;
      svgElement('rect', {class: 'cell', x: c * cell, y: r * cell, width: cell, height: cell,
                          fill: viridis(m.values[i]), 'data-query': r, 'data-key': c, 'data-weight': m.texts[i]},
                 cells);
    }
  for (const [r, c] of linkCells(m))
      svgElement('rect', {class: 'link', x: c * cell + 1.5, y: r * cell + 1.5, width: cell - 3, height: cell - 3,
                          fill: 'none', stroke: '#ff4f00', 'stroke-width': 2, 'pointer-events': 'none'}, cells);
  drawHeatmapLabels(svg, m, left, top, cell);
  svgElement('rect', {id: 'hl-row', x: left, y: 0, width: cell * m.columns.length, height: cell, fill: 'none',
                      stroke: '#e8308c', 'stroke-width': 2.5, visibility: 'hidden', 'pointer-events': 'none'}, svg);
  svgElement('rect', {id: 'hl-column', x: 0, y: top, width: cell, height: cell * m.rows.length, fill: 'none',
                      stroke: '#e8308c', 'stroke-width': 2.5, visibility: 'hidden', 'pointer-events': 'none'}, svg);
  svg.dataset.cell = cell;
  svg.dataset.left = left;
  svg.dataset.top = top;
  timings.heatmap_ms = performance.now() - start;
}

function drawHeatmapLabels(svg, m, left, top, cell) {
  m.rows.forEach((row, r) => {
    const text = svgText(svg, left - 4, top + r * cell + cell / 2 + 4, row.label,
                         {class: 'tok', 'text-anchor': 'end', tabindex: 0, 'data-axis': 'query', 'data-pos': r});
    text.setAttribute('aria-label', 'query ' + r + ' ' + row.label);
  });
  m.columns.forEach((column, c) => {
    const x = left + c * cell + cell / 2 + 4, y = top - 4;
    const text = svgText(svg, x, y, column.label, {class: 'tok', 'text-anchor': 'start', tabindex: 0,
                                                   'data-axis': 'key', 'data-pos': c,
                                                   transform: 'rotate(-90 ' + x + ' ' + y + ')'});
    text.setAttribute('aria-label', 'key ' + c + ' ' + column.label);
  });
}

// Highlights query row q and key column k (either may be null) and shows their exact weights.
function highlight(q, k) {
  const svg = $('heatmap'), m = state.matrix;
  const cell = Number(svg.dataset.cell), left = Number(svg.dataset.left), top = Number(svg.dataset.top);
  const row = $('hl-row'), column = $('hl-column');
  row.setAttribute('visibility', q === null ? 'hidden' : 'visible');
  column.setAttribute('visibility', k === null ? 'hidden' : 'visible');
  if (q !== null) row.setAttribute('y', top + q * cell);
  if (k !== null) column.setAttribute('x', left + k * cell);
  svg.querySelectorAll('text.tok').forEach(t => {
    const pos = Number(t.dataset.pos);
    t.classList.toggle('active', t.dataset.axis === 'query' ? pos === q : pos === k);
  });
  svg.dataset.activeQuery = q === null ? '' : q;
  svg.dataset.activeKey = k === null ? '' : k;
  $('details').textContent = details(m, q, k);
}

function details(m, q, k) {
  const weight = (r, c) => m.texts[r * m.columns.length + c];
  if (q !== null && k !== null)
    return 'query ' + q + ' ' + m.rows[q].label + '  key ' + k + ' ' + m.columns[k].label + '  weight ' + weight(q, k);
  const lines = [];
  if (q !== null) {
    lines.push('query ' + q + ' ' + m.rows[q].label + ' attends to:');
    m.columns.forEach((column, c) => lines.push('  ' + c + ' ' + column.label + '  ' + weight(q, c)));
  } else if (k !== null) {
    lines.push('key ' + k + ' ' + m.columns[k].label + ' is attended by:');
    m.rows.forEach((row, r) => lines.push('  ' + r + ' ' + row.label + '  ' + weight(r, k)));
  }
  return lines.join('\n');
}

function heatmapEvents() {
  const svg = $('heatmap');
  const fromTarget = target => {
    if (target.classList.contains('cell')) return [Number(target.dataset.query), Number(target.dataset.key)];
    if (target.classList.contains('tok'))
      return target.dataset.axis === 'query' ? [Number(target.dataset.pos), null] : [null, Number(target.dataset.pos)];
    return null;
  };
  svg.addEventListener('mouseover', event => {
    const at = fromTarget(event.target);
    if (at) highlight(at[0], at[1]);
  });
  svg.addEventListener('focusin', event => {
    const at = fromTarget(event.target);
    if (at) highlight(at[0], at[1]);
    else if (event.target === svg) moveCursor(0, 0);
  });
  svg.addEventListener('keydown', event => {
    const moves = {ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1]};
    if (event.target !== svg || !moves[event.key]) return;
    event.preventDefault();
    moveCursor(moves[event.key][0], moves[event.key][1]);
  });
}

function moveCursor(dq, dk) {
  const m = state.matrix;
  const cursor = state.cursor || {q: 0, k: 0};
  cursor.q = Math.min(m.rows.length - 1, Math.max(0, cursor.q + dq));
  cursor.k = Math.min(m.columns.length - 1, Math.max(0, cursor.k + dk));
  state.cursor = cursor;
  highlight(cursor.q, cursor.k);
}

function drawLegend() {
  const svg = $('legend');
  clearElement(svg);
  const width = 260, height = 36;
  svg.setAttribute('width', width);
  svg.setAttribute('height', height);
  const gradient = svgElement('linearGradient', {id: 'viridis-gradient'}, svgElement('defs', {}, svg));
  for (let i = 0; i <= 10; ++i) svgElement('stop', {offset: i / 10, 'stop-color': viridis(i / 10)}, gradient);
  svgElement('rect', {x: 10, y: 2, width: width - 20, height: 14, fill: 'url(#viridis-gradient)'}, svg);
  [0, 0.25, 0.5, 0.75, 1].forEach(v => svgText(svg, 10 + v * (width - 20), 30, String(v), {'text-anchor': 'middle'}));
}

// ---- the head view -------------------------------------------------------------------------

function drawHeadView() {
  const start = performance.now();
  const svg = $('headview');
  clearElement(svg);
  const m = state.matrix;
  const step = 18, columnGap = 220, keyX = labelWidth(m.columns), queryX = keyX + columnGap;
  const height = 20 + step * Math.max(m.rows.length, m.columns.length);
  const width = queryX + labelWidth(m.rows);
  svg.setAttribute('width', width);
  svg.setAttribute('height', height);
  svg.setAttribute('viewBox', '0 0 ' + width + ' ' + height);
  svgElement('rect', {x: 0, y: 0, width: width, height: height, fill: '#ffffff'}, svg);
  const y = i => 16 + i * step;
  const lines = svgElement('g', {}, svg);
  m.rows.forEach((row, r) => m.columns.forEach((column, c) => {
    const weight = m.values[r * m.columns.length + c];
    if (weight < 0.005) return;
    svgElement('line', {x1: keyX + 6, y1: y(c) - 4, x2: queryX - 6, y2: y(r) - 4, stroke: '#1f4e79',
                        'stroke-width': 2, 'stroke-opacity': weight.toFixed(3), 'data-query': r, 'data-key': c}, lines);
  }));
  for (const [r, c] of linkCells(m))
      svgElement('line', {class: 'link', x1: keyX + 6, y1: y(c) - 4, x2: queryX - 6, y2: y(r) - 4, stroke: '#ff4f00',
                          'stroke-width': 1.5, 'stroke-dasharray': '4 3'}, svg);
  m.columns.forEach((column, c) => svgText(svg, keyX, y(c), column.label,
      {class: 'tok', 'text-anchor': 'end', tabindex: 0, 'data-axis': 'key', 'data-pos': c,
       'aria-label': 'key ' + c + ' ' + column.label}));
  m.rows.forEach((row, r) => svgText(svg, queryX, y(r), row.label,
      {class: 'tok', tabindex: 0, 'data-axis': 'query', 'data-pos': r, 'aria-label': 'query ' + r + ' ' + row.label}));
  timings.headview_ms = performance.now() - start;
}

// Only the lines of the token under the pointer or the focus stay visible.
function headViewEvents() {
  const svg = $('headview');
  const show = target => {
    const axis = target && target.classList && target.classList.contains('tok') ? target.dataset.axis : null;
    svg.querySelectorAll('line:not(.link)').forEach(line => {
      const keep = !axis || line.dataset[axis] === target.dataset.pos;
      line.setAttribute('visibility', keep ? 'visible' : 'hidden');
    });
    svg.querySelectorAll('text.tok').forEach(t => t.classList.toggle('active', t === target));
  };
  svg.addEventListener('mouseover', event => show(event.target));
  svg.addEventListener('focusin', event => show(event.target));
  svg.addEventListener('mouseleave', () => show(null));
  svg.addEventListener('focusout', () => show(null));
}

// ---- the overview of all heads -------------------------------------------------------------

function drawThumbnail(canvas, matrix) {
  canvas.width = matrix.columns.length;
  canvas.height = matrix.rows.length;
  const context = canvas.getContext('2d');
  const image = context.createImageData(canvas.width, canvas.height);
  matrix.values.forEach((v, i) => {
    const rgb = viridis(v).slice(4, -1).split(',').map(Number);
    image.data.set([rgb[0], rgb[1], rgb[2], 255], i * 4);
  });
  context.putImageData(image, 0, 0);
}

function drawOverview() {
  const start = performance.now();
  const overview = $('overview');
  clearElement(overview);
  const shape = mapShape();
  for (const kind of KIND_ORDER.filter(k => shape[k])) {
    const heading = document.createElement('h3');
    heading.textContent = kind;
    overview.appendChild(heading);
    const grid = document.createElement('div');
    grid.className = 'grid';
    const heads = shape[kind][Object.keys(shape[kind])[0]];
    const columns = heads.length > 1 ? heads.concat(['mean']) : heads;
    grid.style.gridTemplateColumns = 'auto repeat(' + columns.length + ', auto)';
    const label = text => {
      const span = document.createElement('span');
      span.className = 'label';
      span.textContent = text;
      grid.appendChild(span);
    };
    label('');
    for (const head of columns) label(head === 'mean' ? 'mean' : 'head ' + head);
    for (const layer of Object.keys(shape[kind]).map(Number)) {
      label('layer ' + layer);
      for (const head of columns) grid.appendChild(thumbnail(kind, layer, head));
    }
    overview.appendChild(grid);
  }
  timings.overview_ms = performance.now() - start;
}

function thumbnail(kind, layer, head) {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'thumb';
  button.setAttribute('aria-label', kind + ' layer ' + layer + (head === 'mean' ? ' mean of heads' : ' head ' + head));
  button.title = button.getAttribute('aria-label');
  button.setAttribute('aria-pressed', String(kind === state.kind && layer === state.layer && String(head) === String(state.head)));
  Object.assign(button.dataset, {kind: kind, layer: layer, head: head});
  const canvas = document.createElement('canvas');
  drawThumbnail(canvas, displayMatrix(kind, layer, head, state.units));
  button.appendChild(canvas);
  button.addEventListener('click', () => focusMap(kind, layer, head));
  return button;
}

// ---- controls ------------------------------------------------------------------------------

function fillSelect(select, values, labels, selected) {
  clearElement(select);
  values.forEach((value, i) => {
    const option = document.createElement('option');
    option.value = value;
    option.textContent = labels ? labels[i] : value;
    select.appendChild(option);
  });
  select.value = String(selected);
}

function fillControls() {
  const shape = mapShape();
  const kinds = KIND_ORDER.filter(k => shape[k]);
  if (kinds.indexOf(state.kind) < 0) state.kind = kinds.indexOf('cross') >= 0 ? 'cross' : kinds[0];
  const layers = Object.keys(shape[state.kind]).map(Number);
  if (layers.indexOf(state.layer) < 0) state.layer = layers[layers.length - 1];
  const heads = shape[state.kind][state.layer];
  const headValues = heads.length > 1 ? heads.map(String).concat(['mean']) : heads.map(String);
  if (headValues.indexOf(String(state.head)) < 0) state.head = heads[0];
  fillSelect($('kind'), kinds, null, state.kind);
  fillSelect($('layer'), layers, null, state.layer);
  fillSelect($('head'), headValues, headValues.map(h => h === 'mean' ? 'mean of heads' : h), state.head);
  const sentences = state.data.sentences;
  fillSelect($('sentence'), sentences.map((s, i) => i), sentences.map(s => s.index + ': ' + s.source.slice(0, 50)),
             state.sentence);
}

function focusMap(kind, layer, head) {
  state.kind = kind;
  state.layer = layer;
  state.head = head;
  redrawFocused();
  document.querySelectorAll('button.thumb').forEach(b => b.setAttribute('aria-pressed',
      String(b.dataset.kind === kind && Number(b.dataset.layer) === layer && b.dataset.head === String(head))));
}

function redrawFocused() {
  fillControls();
  state.matrix = displayMatrix(state.kind, state.layer, state.head, state.units);
  state.cursor = null;
  const head = state.head === 'mean' ? 'mean of heads' : 'head ' + state.head;
  $('heatmap-title').textContent = state.kind + ', layer ' + state.layer + ', ' + head;
  drawHeatmap();
  drawHeadView();
  $('details').textContent = '';
}

function showSentence() {
  const sentence = sentenceData();
  state.maps = indexMaps(sentence);
  $('pair-text').textContent = 'source: ' + sentence.source + '\n' + (state.data.mode === 'forced' ? 'target (forced): '
                               : 'translation: ') + sentence.target;
  const links = state.data.alignment ? 'alignment (' + state.data.alignment.unit + ', ' +
      state.data.alignment.extraction + '): ' + sentence.links.map(l => l[0] + '-' + l[1]).join(' ') : '';
  $('links-text').textContent = links;
  if (!sentence.maps.length) {
    $('status').textContent = 'sentence ' + sentence.index + ' has no tokens, hence no maps';
    return;
  }
  redrawFocused();
  drawOverview();
}

function controlEvents() {
  $('sentence').addEventListener('change', () => { state.sentence = Number($('sentence').value); showSentence(); });
  $('kind').addEventListener('change', () => focusMap($('kind').value, state.layer, state.head));
  $('layer').addEventListener('change', () => focusMap(state.kind, Number($('layer').value), state.head));
  $('head').addEventListener('change', () => {
    const head = $('head').value;
    focusMap(state.kind, state.layer, head === 'mean' ? 'mean' : Number(head));
  });
  $('units').addEventListener('change', () => { state.units = $('units').value; redrawFocused(); drawOverview(); });
  $('show-links').addEventListener('change', () => { state.showLinks = $('show-links').checked; redrawFocused(); });
}

function tabEvents() {
  const tabs = Array.from(document.querySelectorAll('[role=tab]'));
  const select = tab => {
    for (const other of tabs) {
      const selected = other === tab;
      other.setAttribute('aria-selected', String(selected));
      other.tabIndex = selected ? 0 : -1;
      $(other.getAttribute('aria-controls')).hidden = !selected;
    }
    if (tab.id === 'tab-run') loadRun();
  };
  tabs.forEach((tab, i) => {
    tab.addEventListener('click', () => select(tab));
    tab.addEventListener('keydown', event => {
      const visible = tabs.filter(t => !t.hidden);
      const at = visible.indexOf(tab);
      const next = {ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: visible.length - 1}[event.key];
      if (next === undefined) return;
      event.preventDefault();
      const target = visible[(next + visible.length) % visible.length];
      target.focus();
      select(target);
    });
  });
  return select;
}

// ---- talking to attn-serve -----------------------------------------------------------------

function setStatus(text, error) {
  $('status').textContent = text;
  $('status').classList.toggle('error', Boolean(error));
}

async function post(path, body) {
  const key = $('api-key').value;
  if (key) body.api_key = key;
  const response = await fetch(path, {method: 'POST', headers: {'Content-Type': 'application/json'},
                                      body: JSON.stringify(body)});
  const answer = await response.json();
  if (!response.ok) throw new Error(answer.error || response.statusText);
  return answer;
}

async function translate() {
  setStatus('translating…');
  try {
    const answer = await post('/v1/translate', {q: $('source').value, nbest: Math.min(state.beam, 5)});
    showTranslation(answer.translations[0]);
    setStatus('');
    selectTab($('tab-translate'));
  } catch (error) {
    setStatus('translation failed: ' + error.message, true);
  }
}

function showTranslation(translation) {
  const out = $('translation');
  clearElement(out);
  for (const line of translation.text.split('\n')) {
    const div = document.createElement('div');
    div.className = 'line';
    div.textContent = line;
    out.appendChild(div);
  }
  const alternatives = $('alternatives');
  clearElement(alternatives);
  for (const sentence of translation.sentences) {
    const list = document.createElement('ol');
    list.setAttribute('aria-label', 'alternatives for: ' + sentence.source);
    for (const hypothesis of sentence.nbest) {
      const item = document.createElement('li');
      item.textContent = hypothesis.text + ' ';
      const score = document.createElement('span');
      score.className = 'score';
      score.textContent = '(score ' + hypothesis.score.toFixed(4) + ', log-prob ' + hypothesis.log_prob.toFixed(4) + ')';
      item.appendChild(score);
      list.appendChild(item);
    }
    alternatives.appendChild(list);
  }
}

async function explore() {
  setStatus('computing attention…');
  const body = {q: $('source').value, beam: Number($('beam').value) || 1};
  if ($('target').value.trim()) body.target = $('target').value;
  try {
    const start = performance.now();
    const data = await post('/v1/attention', body);
    timings.attention_request_ms = performance.now() - start;
    showData(data);
    setStatus('');
  } catch (error) {
    setStatus('attention failed: ' + error.message, true);
  }
}

function showData(data) {
  state.data = data;
  state.sentence = 0;
  if (!data.sentences.length) {
    setStatus('no sentence to show', true);
    return;
  }
  selectTab($('tab-attention'));
  showSentence();
}

// ---- the run's curves ----------------------------------------------------------------------

const CHARTS = [
  {title: 'loss', series: [['train', 'loss'], ['valid', 'loss']]},
  {title: 'perplexity', series: [['train', 'ppl'], ['valid', 'ppl']]},
  {title: 'dev BLEU', series: [['valid', 'bleu']]},
  {title: 'dev chrF', series: [['valid', 'chrf']]},
  {title: 'learning rate', series: [['train', 'lr']]},
  {title: 'tokens/s', series: [['train', 'tokens_per_s']]},
  {title: 'RSS (MB)', series: [['train', 'rss_mb']]},
];
const SERIES_COLOURS = {train: '#1f4e79', valid: '#c2410c'};

async function loadRun() {
  if (state.embedded) return;
  try {
    const response = await fetch('/v1/run');
    const run = await response.json();
    if (!response.ok) throw new Error(run.error || response.statusText);
    const key = run.log.length + ':' + JSON.stringify(run.log[run.log.length - 1] || null);
    if (key === state.runKey) return;
    state.runKey = key;
    state.run = run;
    drawRun();
  } catch (error) {
    setStatus('the run could not be read: ' + error.message, true);
  }
}

function points(log, type, field) {
  return log.filter(r => r.type === type && typeof r[field] === 'number' && isFinite(r[field]))
            .map(r => [r.step, r[field]]);
}

function drawRun() {
  const run = state.run;
  $('run-name').textContent = run.run + ': ' + run.log.length + ' log records' +
      (run.log_stride > 1 ? ' (every ' + run.log_stride + 'th training record of a long log)' : '');
  $('config').textContent = JSON.stringify(run.config, null, 2);
  const charts = $('charts');
  clearElement(charts);
  for (const chart of CHARTS) {
    const series = chart.series.map(([type, field]) => ({type: type, field: field, points: points(run.log, type, field)}))
                        .filter(s => s.points.length);
    if (!series.length) continue;
    const figure = document.createElement('figure');
    const caption = document.createElement('figcaption');
    caption.textContent = chart.title + ' vs step';
    figure.appendChild(caption);
    figure.appendChild(lineChart(chart.title, series));
    charts.appendChild(figure);
  }
}

function lineChart(title, series) {
  const width = 340, height = 200, left = 64, right = 10, top = 10, bottom = 36;
  const all = [].concat(...series.map(s => s.points));
  const [x0, x1] = [Math.min(...all.map(p => p[0])), Math.max(...all.map(p => p[0]))];
  const [y0, y1] = [Math.min(...all.map(p => p[1])), Math.max(...all.map(p => p[1]))];
  const sx = x => left + (x1 > x0 ? (x - x0) / (x1 - x0) : 0.5) * (width - left - right);
  const sy = y => top + (y1 > y0 ? 1 - (y - y0) / (y1 - y0) : 0.5) * (height - top - bottom);
  const svg = svgElement('svg', {width: width, height: height, viewBox: '0 0 ' + width + ' ' + height, role: 'img',
                                 class: 'chart', 'data-title': title,
                                 'aria-label': title + ' against step: ' + series.map(s => s.type).join(', ')});
  svgElement('rect', {x: 0, y: 0, width: width, height: height, fill: '#ffffff'}, svg);
  svgElement('path', {d: 'M' + left + ' ' + top + 'V' + (height - bottom) + 'H' + (width - right), stroke: '#4a4a4a',
                      fill: 'none'}, svg);
  const number = v => Math.abs(v) >= 1e4 || (v !== 0 && Math.abs(v) < 1e-2) ? v.toExponential(2) : String(+v.toFixed(3));
  svgText(svg, left - 4, top + 10, number(y1), {'text-anchor': 'end'});
  svgText(svg, left - 4, height - bottom, number(y0), {'text-anchor': 'end'});
  svgText(svg, left, height - bottom + 14, String(x0), {'text-anchor': 'start'});
  svgText(svg, width - right, height - bottom + 14, String(x1), {'text-anchor': 'end'});
  svgText(svg, (left + width) / 2, height - 4, 'step', {'text-anchor': 'middle'});
  series.forEach((s, i) => {
    const colour = SERIES_COLOURS[s.type];
    svgText(svg, width - right - 4, top + 12 + 14 * i, s.type, {'text-anchor': 'end', fill: colour});
    svgElement('polyline', {points: s.points.map(p => sx(p[0]) + ',' + sy(p[1])).join(' '), fill: 'none',
                            stroke: colour, 'stroke-width': 1.5}, svg);
    for (const [x, y] of s.points)
      svgElement('circle', {cx: sx(x), cy: sy(y), r: 2, fill: colour, 'data-series': s.type + '.' + s.field,
                            'data-step': x, 'data-value': y}, svg);
  });
  return svg;
}

// ---- downloads -----------------------------------------------------------------------------

function save(name, blob) {
  const link = document.createElement('a');
  link.href = URL.createObjectURL(blob);
  link.download = name;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

function mapCsvRows(sentence, matrix) {
  const map = matrix.map, rows = [];
  matrix.rows.forEach((row, r) => matrix.columns.forEach((column, c) => {
    rows.push([sentence.index, map.kind, map.layer, map.head, r, csvField(row.label), c, csvField(column.label),
               matrix.texts[r * matrix.columns.length + c]].join(','));
  }));
  return rows;
}

// A view's numbers as attn-dump-attention's tidy CSV: the focused map, or every map of the
// sentence (the overview); in pieces, these are the dump's rows for this sentence.
function viewCsv(view) {
  const sentence = sentenceData();
  let rows = [];
  if (view === 'overview') {
    for (const map of sentence.maps)
      rows = rows.concat(mapCsvRows(sentence, displayMatrix(map.kind, map.layer, map.head, state.units)));
  } else {
    rows = mapCsvRows(sentence, state.matrix);
  }
  return CSV_HEADER + '\n' + rows.join('\n') + '\n';
}

function runCsv() {
  const lines = ['type,step,field,value'];
  for (const chart of CHARTS)
    for (const [type, field] of chart.series)
      for (const [step, value] of points(state.run.log, type, field)) lines.push([type, step, field, value].join(','));
  return lines.join('\n') + '\n';
}

// An SVG of the overview's thumbnails (they are canvases on the page): a row per layer.
function overviewSvg() {
  const svg = svgElement('svg', {});
  const size = 72, gap = 6;
  let y = 0, width = 0, x = 0;
  for (const grid of $('overview').querySelectorAll('.grid')) {
    svgText(svg, 0, y + 14, grid.previousSibling.textContent);
    y += 20 - (size + gap);
    for (const child of grid.children) {
      if (child.className === 'label') {
        if (!child.textContent.startsWith('layer')) continue;  // the heads' header
        x = 70;
        y += size + gap;
        svgText(svg, 0, y + size / 2, child.textContent);
        continue;
      }
      const m = displayMatrix(child.dataset.kind, Number(child.dataset.layer),
                              child.dataset.head === 'mean' ? 'mean' : Number(child.dataset.head), state.units);
      const cell = size / Math.max(m.rows.length, m.columns.length);
      const g = svgElement('g', {transform: 'translate(' + x + ',' + y + ')'}, svg);
      m.values.forEach((v, i) => svgElement('rect', {x: (i % m.columns.length) * cell,
          y: Math.floor(i / m.columns.length) * cell, width: cell, height: cell, fill: viridis(v)}, g));
      x += size + gap;
      width = Math.max(width, x);
    }
    y += size + gap + 10;
  }
  svg.setAttribute('width', width);
  svg.setAttribute('height', y);
  return svg;
}

function viewSvg(view) {
  if (view === 'overview') return overviewSvg();
  if (view === 'run') {
    const svg = svgElement('svg', {});
    let y = 0;
    for (const chart of $('charts').querySelectorAll('svg.chart')) {
      const copy = chart.cloneNode(true);
      copy.setAttribute('y', y);
      svg.appendChild(copy);
      y += Number(chart.getAttribute('height')) + 10;
    }
    svg.setAttribute('width', 340);
    svg.setAttribute('height', y);
    return svg;
  }
  return $(view).cloneNode(true);
}

function serializedSvg(view) {
  const svg = viewSvg(view);
  svg.setAttribute('xmlns', SVG_NS);
  const style = document.createElementNS(SVG_NS, 'style');
  style.textContent = 'text { font-family: monospace; font-size: 12px; fill: #1a1a1a; }';
  svg.insertBefore(style, svg.firstChild);
  return new XMLSerializer().serializeToString(svg);
}

function savePng(view, name) {
  const text = serializedSvg(view);
  const image = new Image();
  image.onload = () => {
    const canvas = document.createElement('canvas');
    canvas.width = image.width * 2;
    canvas.height = image.height * 2;
    const context = canvas.getContext('2d');
    context.scale(2, 2);
    context.drawImage(image, 0, 0);
    canvas.toBlob(blob => save(name + '.png', blob), 'image/png');
  };
  image.src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(text);
}

function downloadName(view) {
  if (view === 'run') return 'run';
  const s = sentenceData();
  const head = view === 'overview' ? 'all' : state.kind + '-layer' + state.layer + '-head' + state.head;
  return 'attention-' + s.index + '-' + view + '-' + head;
}

function addDownloads() {
  for (const holder of document.querySelectorAll('.downloads')) {
    const view = holder.dataset.view;
    const formats = {PNG: () => savePng(view, downloadName(view)),
                     SVG: () => save(downloadName(view) + '.svg', new Blob([serializedSvg(view)], {type: 'image/svg+xml'})),
                     CSV: () => save(downloadName(view) + '.csv',
                                     new Blob([view === 'run' ? runCsv() : viewCsv(view)], {type: 'text/csv'}))};
    for (const [format, action] of Object.entries(formats)) {
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = format;
      button.setAttribute('aria-label', 'Download the ' + view + ' as ' + format);
      button.addEventListener('click', action);
      holder.appendChild(button);
    }
  }
}

// ---- start ---------------------------------------------------------------------------------

let selectTab = null;

async function loadSettings() {
  try {
    const response = await fetch('/v1/run');
    const run = await response.json();
    if (!response.ok) throw new Error(run.error || response.statusText);
    state.beam = run.beam;
    $('beam').max = run.beam;
    $('beam').value = run.beam;
    $('api-key-field').hidden = !run.keys_required;
    $('model-name').textContent = run.run + ' (' + run.source + ' → ' + run.target + ')';
  } catch (error) {
    setStatus('the server is not ready: ' + error.message, true);
  }
}

function start() {
  selectTab = tabEvents();
  heatmapEvents();
  headViewEvents();
  controlEvents();
  addDownloads();
  drawLegend();
  const embedded = $('attn-data');
  if (embedded) {
    state.embedded = true;
    $('inputs').hidden = true;
    $('tab-translate').hidden = true;
    $('tab-run').hidden = true;
    const data = JSON.parse(embedded.textContent);
    $('model-name').textContent = data.model;
    showData(data);
  } else {
    $('translate').addEventListener('click', translate);
    $('explore').addEventListener('click', explore);
    loadSettings();
    setInterval(() => { if (!$('panel-run').hidden) loadRun(); }, 5000);
  }
}

window.attnExplorer = {timings: timings, state: state, viewCsv: viewCsv, formatWeight: formatWeight,
                       showSentence: showSentence, focusMap: focusMap};
start();
