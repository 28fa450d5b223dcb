// The concept page's neighbourhood graph (the only part of the UI that needs JavaScript).
//
// Loaded as <script type="module" src="/ui/static/graph.js">. It finds #graph, fetches its
// data-src (neighborhood.json: {"nodes":[{id,label,doc_freq,depth}],"edges":[{source,target,weight}]})
// and draws it with cytoscape (vendored by .ci/ui-assets.sh, no build step). Works under the UI's
// CSP (script-src 'self'; style-src 'self'): no eval, no inline markup styles, data only ever
// reaches the DOM through textContent or cytoscape's canvas. The no-JS neighbour table elsewhere on
// the page is left alone; only the children of #graph are replaced.
//
// #graph ends with data-state="ready|empty|error" and, once drawn, data-ready="true".

const LIBRARY = "./vendor/cytoscape.esm.min.mjs";
// cytoscape injects an inline <style> (blocked by the CSP) unless an element with this id exists;
// graph.css carries the rule it would add.
const CYTOSCAPE_STYLESHEET_ID = "__________cytoscape_stylesheet";

const NODE_MIN = 18;
const NODE_MAX = 64;
const EDGE_MIN = 1;
const EDGE_MAX = 7;

/** Node diameter in px: square-root scale of doc_freq against the largest, bounded. */
export function nodeSize(docFreq, maxDocFreq) {
  const f = Number.isFinite(docFreq) && docFreq > 0 ? docFreq : 0;
  const m = Number.isFinite(maxDocFreq) && maxDocFreq > 0 ? maxDocFreq : 1;
  const r = Math.sqrt(Math.min(f, m) / m);
  return Math.round(NODE_MIN + (NODE_MAX - NODE_MIN) * r);
}

/** Edge width in px: linear in weight against the heaviest edge, bounded. */
export function edgeWidth(weight, maxWeight) {
  const w = Number.isFinite(weight) && weight > 0 ? weight : 0;
  const m = Number.isFinite(maxWeight) && maxWeight > 0 ? maxWeight : 1;
  return Math.round((EDGE_MIN + (EDGE_MAX - EDGE_MIN) * Math.min(w / m, 1)) * 10) / 10;
}

function isId(v) {
  return Number.isSafeInteger(v) || (typeof v === "string" && /^\d{1,18}$/.test(v));
}

/**
 * Validated cytoscape elements from the neighborhood.json payload. Malformed nodes, duplicate
 * nodes and edges whose ends are not in the node list are dropped (cytoscape would throw on them).
 */
export function buildElements(payload, seedId) {
  const rawNodes = Array.isArray(payload?.nodes) ? payload.nodes : [];
  const rawEdges = Array.isArray(payload?.edges) ? payload.edges : [];
  const seed = seedId == null ? null : String(seedId);

  const nodes = new Map();
  for (const n of rawNodes) {
    if (!n || !isId(n.id) || nodes.has(String(n.id))) continue;
    const id = String(n.id);
    const depth = Number.isFinite(n.depth) && n.depth >= 0 ? Math.floor(n.depth) : id === seed ? 0 : 1;
    nodes.set(id, {
      id,
      label: typeof n.label === "string" && n.label !== "" ? n.label : `#${id}`,
      docFreq: Number.isFinite(n.doc_freq) && n.doc_freq > 0 ? n.doc_freq : 0,
      depth: id === seed ? 0 : depth,
    });
  }
  const edges = [];
  for (const e of rawEdges) {
    if (!e || !isId(e.source) || !isId(e.target)) continue;
    const source = String(e.source);
    const target = String(e.target);
    if (source === target || !nodes.has(source) || !nodes.has(target)) continue;
    edges.push({ source, target, weight: Number.isFinite(e.weight) && e.weight > 0 ? e.weight : 0 });
  }

  const maxDocFreq = Math.max(1, ...[...nodes.values()].map((n) => n.docFreq));
  const maxWeight = Math.max(0, ...edges.map((e) => e.weight)) || 1;
  const maxDepth = Math.max(0, ...[...nodes.values()].map((n) => n.depth));

  const elements = [];
  for (const n of nodes.values()) {
    elements.push({
      group: "nodes",
      data: {
        id: n.id,
        label: n.label,
        docFreq: n.docFreq,
        depth: n.depth,
        ring: maxDepth - n.depth,
        size: nodeSize(n.docFreq, maxDocFreq),
      },
      classes: n.id === seed ? "seed" : `depth-${Math.min(n.depth, 2)}`,
    });
  }
  edges.forEach((e, i) => {
    elements.push({
      group: "edges",
      data: { id: `e${i}`, source: e.source, target: e.target, weight: e.weight, width: edgeWidth(e.weight, maxWeight) },
    });
  });
  return { elements, nodeCount: nodes.size, edgeCount: edges.length };
}

/** The page a node opens. */
export function conceptHref(id) {
  return `/concepts/${encodeURIComponent(String(id))}`;
}

function colours(container) {
  // graph.css defines these custom properties (with a dark-scheme variant); fall back if absent.
  const cs = getComputedStyle(container);
  const v = (name, fallback) => cs.getPropertyValue(name).trim() || fallback;
  return {
    text: v("--graph-text", "#1f2328"),
    textBg: v("--graph-text-bg", "#ffffff"),
    node: v("--graph-node", "#3b6fd4"),
    nodeFar: v("--graph-node-far", "#8fb0ea"),
    seed: v("--graph-seed", "#c2410c"),
    edge: v("--graph-edge", "#9aa4b2"),
    focus: v("--graph-focus", "#111111"),
  };
}

function styles(c) {
  return [
    {
      selector: "node",
      style: {
        width: "data(size)",
        height: "data(size)",
        "background-color": c.node,
        label: "data(label)",
        color: c.text,
        "font-size": 13,
        "font-family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif",
        "text-valign": "bottom",
        "text-halign": "center",
        "text-margin-y": 4,
        "text-wrap": "ellipsis",
        "text-max-width": "140px",
        "text-background-color": c.textBg,
        "text-background-opacity": 0.85,
        "text-background-padding": "2px",
        "text-background-shape": "roundrectangle",
        "min-zoomed-font-size": 7,
        "overlay-opacity": 0,
      },
    },
    { selector: "node.depth-2", style: { "background-color": c.nodeFar } },
    {
      selector: "node.seed",
      style: {
        "background-color": c.seed,
        "border-width": 4,
        "border-color": c.focus,
        "font-weight": "bold",
        "font-size": 15,
        "z-index": 10,
      },
    },
    {
      selector: "node.focused",
      style: { "border-width": 3, "border-color": c.focus, "border-style": "double", "z-index": 20 },
    },
    {
      selector: "edge",
      style: {
        width: "data(width)",
        "line-color": c.edge,
        "curve-style": "straight",
        opacity: 0.8,
        "overlay-opacity": 0,
      },
    },
    { selector: "edge.near", style: { "line-color": c.focus, opacity: 1 } },
  ];
}

function say(container, text, state) {
  container.replaceChildren();
  const p = document.createElement("p");
  p.className = "graph-message";
  p.textContent = text;
  container.append(p);
  container.dataset.state = state;
  container.removeAttribute("aria-busy");
}

async function load(container) {
  const src = container.dataset.src;
  if (!src) {
    say(container, "No graph to draw. The neighbour table below still works.", "error");
    return;
  }
  const url = new URL(src, window.location.href);
  if (url.origin !== window.location.origin) {
    say(container, "Refusing to load a graph from another site. The neighbour table below still works.", "error");
    return;
  }

  say(container, "Loading the graph…", "loading");
  container.setAttribute("aria-busy", "true");

  let cytoscape;
  let payload;
  try {
    const [lib, res] = await Promise.all([
      import(LIBRARY).catch(() => null),
      fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } }),
    ]);
    if (!lib || typeof lib.default !== "function") {
      say(container, "Could not load the graph library. The neighbour table below still works.", "error");
      return;
    }
    cytoscape = lib.default;
    if (!res.ok) {
      say(container, `Could not load the graph (HTTP ${res.status}). The neighbour table below still works.`, "error");
      return;
    }
    if (!(res.headers.get("content-type") || "").includes("json")) {
      // A sign-in redirect lands on an HTML page: the session is over.
      say(container, "Could not load the graph (signed out?). Reload the page. The neighbour table below still works.", "error");
      return;
    }
    try {
      payload = await res.json();
    } catch {
      say(container, "Could not load the graph (invalid data). The neighbour table below still works.", "error");
      return;
    }
  } catch {
    say(container, "Could not load the graph (network error). The neighbour table below still works.", "error");
    return;
  }

  const seed = container.dataset.concept ?? null;
  const { elements, nodeCount, edgeCount } = buildElements(payload, seed);
  if (nodeCount === 0 || edgeCount === 0) {
    say(container, "This concept has no neighbours to draw yet.", "empty");
    return;
  }

  try {
    draw(container, cytoscape, elements, seed);
  } catch {
    say(container, "Could not draw the graph. The neighbour table below still works.", "error");
  }
}

function draw(container, cytoscape, elements, seed) {
  container.replaceChildren();
  container.removeAttribute("aria-busy");
  if (!document.getElementById(CYTOSCAPE_STYLESHEET_ID)) {
    const marker = document.createElement("meta");
    marker.id = CYTOSCAPE_STYLESHEET_ID;
    marker.name = "cytoscape-stylesheet";
    marker.content = "graph.css";
    document.head.append(marker);
  }

  const cy = cytoscape({
    container,
    elements,
    style: styles(colours(container)),
    layout: {
      name: "concentric",
      concentric: (n) => n.data("ring"),
      levelWidth: () => 1,
      minNodeSpacing: 28,
      avoidOverlap: true,
      padding: 24,
      animate: false,
      fit: true,
    },
    minZoom: 0.2,
    maxZoom: 3,
    boxSelectionEnabled: false,
    selectionType: "single",
    autounselectify: true,
  });

  const open = (node) => window.location.assign(conceptHref(node.id()));
  cy.on("tap", "node", (evt) => open(evt.target));
  cy.on("mouseover", "node", (evt) => {
    container.style.cursor = "pointer";
    evt.target.connectedEdges().addClass("near");
  });
  cy.on("mouseout", "node", (evt) => {
    container.style.cursor = "";
    evt.target.connectedEdges().removeClass("near");
  });

  keyboard(container, cy, open, seed);

  cy.ready(() => {
    container.dataset.state = "ready";
    container.dataset.ready = "true";
  });
  return cy;
}

// Keyboard use of the canvas: Tab to the graph, arrow keys move between concepts (announced in a
// live region), Enter opens the focused one. The neighbour table remains the primary accessible path.
function keyboard(container, cy, open, seed) {
  const order = cy
    .nodes()
    .toArray()
    .sort((a, b) => a.data("depth") - b.data("depth") || String(a.data("label")).localeCompare(String(b.data("label"))));
  let index = -1;

  const live = document.createElement("p");
  live.className = "graph-live visually-hidden";
  live.setAttribute("aria-live", "polite");
  container.after(live);

  container.tabIndex = 0;
  // A widget role so screen readers pass the arrow keys through instead of browsing with them.
  if (!container.hasAttribute("role")) container.setAttribute("role", "application");
  if (!container.hasAttribute("aria-label")) container.setAttribute("aria-label", "Concept graph");
  container.setAttribute("aria-describedby", ensureHelp(container).id);

  const focusOn = (i) => {
    if (index >= 0) order[index].removeClass("focused").connectedEdges().removeClass("near");
    index = (i + order.length) % order.length;
    const n = order[index];
    n.addClass("focused").connectedEdges().addClass("near");
    const pos = n.renderedPosition();
    const w = container.clientWidth;
    const h = container.clientHeight;
    if (pos.x < 0 || pos.y < 0 || pos.x > w || pos.y > h) cy.center(n);
    const what = n.id() === String(seed) ? "this concept" : `depth ${n.data("depth")}`;
    live.textContent = `${n.data("label")}, ${what}, in ${n.data("docFreq")} memories. Press Enter to open.`;
  };

  container.addEventListener("keydown", (ev) => {
    if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
    switch (ev.key) {
      case "ArrowRight":
      case "ArrowDown":
        focusOn(index + 1);
        break;
      case "ArrowLeft":
      case "ArrowUp":
        focusOn(index < 0 ? -1 : index - 1);
        break;
      case "Home":
        focusOn(0);
        break;
      case "End":
        focusOn(-1);
        break;
      case "Enter":
        if (index < 0) return;
        open(order[index]);
        break;
      case "Escape":
        if (index >= 0) order[index].removeClass("focused").connectedEdges().removeClass("near");
        index = -1;
        live.textContent = "";
        break;
      default:
        return;
    }
    ev.preventDefault();
  });
}

function ensureHelp(container) {
  const id = `${container.id || "graph"}-help`;
  let help = document.getElementById(id);
  if (!help) {
    help = document.createElement("p");
    help.id = id;
    help.className = "graph-help";
    help.textContent = "Click a concept to open it. With the keyboard: focus the graph, use the arrow keys, then Enter.";
    container.after(help);
  }
  return help;
}

function start() {
  const container = document.getElementById("graph");
  if (container) load(container);
}

if (typeof document !== "undefined") {
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start, { once: true });
  else start();
}
