package gen

import (
	"fmt"
	"strconv"
	"strings"
)

// tsWriter renders the model as one TypeScript module.
type tsWriter struct {
	m *model
	b strings.Builder
}

func renderTS(m *model) []byte {
	w := &tsWriter{m: m}
	w.b.WriteString(header)
	desc := strings.TrimSpace(m.title + " " + m.version)
	if desc == "" {
		desc = "the service"
	}
	w.p("// A typed client of %s, generated from its OpenRPC document. It needs no\n// package: fetch and WebSocket are those of Node 22 and browsers.\n", oneLine(desc))
	w.b.WriteString(tsRuntime)
	for _, d := range m.decls {
		w.decl(d)
	}
	w.client()
	return []byte(w.b.String())
}

func (w *tsWriter) p(format string, args ...any) {
	fmt.Fprintf(&w.b, format, args...)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// comment writes text as a JSDoc comment.
func (w *tsWriter) comment(indent, text string) {
	text = strings.TrimSpace(strings.ReplaceAll(text, "*/", "*\u2215"))
	if text == "" {
		return
	}
	lines := strings.Split(text, "\n")
	if len(lines) == 1 {
		w.p("%s/** %s */\n", indent, lines[0])
		return
	}
	w.p("%s/**\n", indent)
	for _, l := range lines {
		w.p("%s * %s\n", indent, strings.TrimRight(l, " \t\r"))
	}
	w.p("%s */\n", indent)
}

func (w *tsWriter) decl(d *decl) {
	w.p("\n")
	if typeName(d.doc) != d.name {
		w.comment("", d.doc)
	}
	switch d.kind {
	case dStruct:
		w.p("export interface %s {\n", d.name)
		for _, f := range d.fields {
			w.comment("  ", f.doc)
			opt := "?"
			if f.required {
				opt = ""
			}
			w.p("  %s%s: %s;\n", tsKey(f.json), opt, w.typeExpr(f.t))
		}
		w.p("}\n")
	case dUnion:
		var alts []string
		for _, v := range d.variants {
			alts = append(alts, w.typeExpr(v.t))
		}
		w.p("export type %s = %s;\n", d.name, strings.Join(alts, " | "))
	case dEnum:
		w.p("export type %s = %s;\n", d.name, literals(d.values))
	case dAlias, dDef:
		w.p("export type %s = %s;\n", d.name, w.typeExpr(d.under))
	}
}

// tsKey is a property name as TypeScript accepts it: bare when it is an
// identifier, else quoted.
func tsKey(name string) string {
	if name != "" && !strings.ContainsFunc(name, func(r rune) bool {
		return !(r == '_' || r == '$' || r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'))
	}) && !(name[0] >= '0' && name[0] <= '9') {
		return name
	}
	return strconv.Quote(name)
}

func literals(vals []*node) string {
	var out []string
	for _, v := range vals {
		out = append(out, v.String())
	}
	return strings.Join(out, " | ")
}

// typeExpr is the TypeScript type of t.
func (w *tsWriter) typeExpr(t *typ) string {
	var s string
	switch t.kind {
	case tRaw:
		return "unknown"
	case tNull:
		return "null"
	case tPrim:
		if len(t.alts) > 0 {
			var alts []string
			for _, a := range t.alts {
				alts = append(alts, w.typeExpr(a))
			}
			s = strings.Join(alts, " | ")
		} else {
			s = tsPrim(t.prim)
		}
	case tLit:
		s = literals(t.values)
	case tArray:
		e := w.typeExpr(t.elem)
		if strings.ContainsAny(e, "| ") {
			e = "(" + e + ")"
		}
		s = e + "[]"
	case tMap:
		s = "Record<string, " + w.typeExpr(t.elem) + ">"
	case tNamed:
		s = t.decl.name
	}
	if t.nullable {
		return s + " | null"
	}
	return s
}

func tsPrim(prim string) string {
	switch prim {
	case "string":
		return "string"
	case "boolean":
		return "boolean"
	}
	return "number"
}

func (w *tsWriter) client() {
	w.p("\n/** Client calls the service's methods through a Transport. */\nexport class Client {\n  constructor(private readonly transport: Transport) {}\n")
	for _, me := range w.m.methods {
		w.p("\n")
		doc := me.doc
		if me.deprecated {
			doc += "\n@deprecated"
		}
		w.comment("  ", fmt.Sprintf("Calls %s. %s", me.name, doc))
		name := lowerFirst(me.goName)
		var args []string
		var params string
		switch {
		case me.whole != nil:
			args = []string{"params?: " + w.typeExpr(me.whole)}
			params = "params"
		case me.variadic:
			args = []string{"..." + me.params[0].tsLocal + ": " + w.arrayOf(me.params[0].t)}
			params = me.params[0].tsLocal
		default:
			params = w.params(me, &args)
		}
		result := "void"
		if me.result != nil {
			result = w.typeExpr(me.result)
		}
		w.p("  async %s(%s): Promise<%s> {\n", tsMethodName(name), strings.Join(args, ", "), result)
		switch {
		case me.notify:
			w.p("    await notify(this.transport, %s, %s);\n", strconv.Quote(me.name), params)
		case me.result == nil:
			w.p("    await this.transport.call(%s, %s);\n", strconv.Quote(me.name), params)
		default:
			w.p("    return (await this.transport.call(%s, %s)) as %s;\n", strconv.Quote(me.name), params, result)
		}
		w.p("  }\n")
	}
	w.p("}\n")
}

func (w *tsWriter) arrayOf(t *typ) string {
	return w.typeExpr(&typ{kind: tArray, elem: t})
}

// tsMethodName keeps a method name from clashing with the class's own
// members.
func tsMethodName(name string) string {
	if name == "constructor" || name == "transport" {
		return name + "Method"
	}
	return name
}

// params writes the arguments and returns the params expression: an
// object by name (absent optional members left out), else an array by
// position (absent optional params at the end left out).
func (w *tsWriter) params(me *method, args *[]string) string {
	if len(me.params) == 0 {
		return "undefined"
	}
	required := 0
	for i, p := range me.params {
		if p.required {
			required = i + 1
		}
	}
	var elems []string
	for i, p := range me.params {
		opt := ""
		if !p.required {
			opt = "?"
			if i < required {
				opt = "" // an optional param before a required one is passed, perhaps as undefined
				*args = append(*args, fmt.Sprintf("%s: %s | undefined", p.tsLocal, w.typeExpr(p.t)))
				goto next
			}
		}
		*args = append(*args, fmt.Sprintf("%s%s: %s", p.tsLocal, opt, w.typeExpr(p.t)))
	next:
		if me.byName {
			elems = append(elems, fmt.Sprintf("%s: %s", tsKey(p.name), p.tsLocal))
		} else {
			elems = append(elems, p.tsLocal)
		}
	}
	if me.byName {
		return "byName({ " + strings.Join(elems, ", ") + " })"
	}
	return fmt.Sprintf("byPosition([%s], %d)", strings.Join(elems, ", "), required)
}

// tsRuntime is the transport code every generated module carries.
const tsRuntime = `
/** A JSON-RPC error response, as a rejected promise. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "RpcError";
  }
}

/** Transport sends a call and resolves to its result (or rejects with RpcError). */
export interface Transport {
  call(method: string, params: unknown): Promise<unknown>;
  /** notify sends a notification; without it, notifications are sent as calls. */
  notify?(method: string, params: unknown): Promise<void>;
}

interface Response {
  id?: number | string | null;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

function settle(res: Response): unknown {
  if (res.error) {
    throw new RpcError(res.error.code, res.error.message, res.error.data);
  }
  return res.result;
}

function request(id: number | undefined, method: string, params: unknown): string {
  const msg: Record<string, unknown> = { jsonrpc: "2.0", method };
  if (params !== undefined) {
    msg.params = params;
  }
  if (id !== undefined) {
    msg.id = id;
  }
  return JSON.stringify(msg);
}

/** httpTransport POSTs each call to url. */
export function httpTransport(url: string, headers: Record<string, string> = {}): Transport {
  let next = 0;
  const post = (body: string) =>
    fetch(url, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body });
  return {
    async call(method, params) {
      const res = await post(request(++next, method, params));
      if (!res.ok && res.headers.get("Content-Type")?.includes("json") !== true) {
        throw new Error("HTTP " + res.status + " from " + url);
      }
      return settle((await res.json()) as Response);
    },
    async notify(method, params) {
      const res = await post(request(undefined, method, params));
      if (!res.ok) {
        throw new Error("HTTP " + res.status + " from " + url);
      }
    },
  };
}

/** webSocketTransport sends calls over one WebSocket, opened at once. */
export function webSocketTransport(url: string): Transport & { close(): void } {
  const ws = new WebSocket(url);
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
  let next = 0;
  const opened = new Promise<void>((resolve, reject) => {
    ws.addEventListener("open", () => resolve());
    ws.addEventListener("error", () => reject(new Error("WebSocket error on " + url)));
  });
  ws.addEventListener("message", (ev: MessageEvent) => {
    let res: Response;
    try {
      res = JSON.parse(String(ev.data)) as Response;
    } catch {
      return;
    }
    if (typeof res.id !== "number") {
      return; // a notification of the server, or an answer we cannot match
    }
    const p = pending.get(res.id);
    if (p) {
      pending.delete(res.id);
      try {
        p.resolve(settle(res));
      } catch (e) {
        p.reject(e);
      }
    }
  });
  ws.addEventListener("close", () => {
    for (const p of pending.values()) {
      p.reject(new Error("WebSocket closed"));
    }
    pending.clear();
  });
  return {
    async call(method, params) {
      await opened;
      const id = ++next;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        ws.send(request(id, method, params));
      });
    },
    async notify(method, params) {
      await opened;
      ws.send(request(undefined, method, params));
    },
    close() {
      ws.close();
    },
  };
}

async function notify(t: Transport, method: string, params: unknown): Promise<void> {
  if (t.notify) {
    return t.notify(method, params);
  }
  await t.call(method, params);
}

function byPosition(args: unknown[], required: number): unknown[] {
  let n = args.length;
  while (n > required && args[n - 1] === undefined) {
    n--;
  }
  return args.slice(0, n).map((a) => (a === undefined ? null : a));
}

function byName(args: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) {
    if (v !== undefined) {
      out[k] = v;
    }
  }
  return out;
}
`
