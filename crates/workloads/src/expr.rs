//! Integer expressions (`i*64`, `N-i`, `(i+1)%4`, `min(i, 3)`) over loop variables and named
//! constants, and label templates (`"t{i}"`, `"kv{b}_{j+1}"`).
//!
//! Grammar: `expr := term (('+'|'-') term)*`, `term := unary (('*'|'/'|'%') unary)*`,
//! `unary := '-' unary | atom`, `atom := integer | name | name '(' expr (',' expr)* ')' | '(' expr ')'`.
//! Values are `i64`; `/` and `%` are Euclidean (the remainder is never negative); overflow and
//! division by zero are errors. Functions: `min`, `max` (two or more arguments).

use std::fmt;

/// Names visible to an expression: loop variables (innermost last) and constants.
#[derive(Clone, Debug, Default)]
pub struct Env {
    vars: Vec<(String, i64)>,
}

impl Env {
    /// An environment holding `constants`.
    pub fn with_constants<'a>(constants: impl IntoIterator<Item = (&'a String, &'a i64)>) -> Env {
        Env {
            vars: constants.into_iter().map(|(k, v)| (k.clone(), *v)).collect(),
        }
    }
    /// Binds `name` (shadowing an outer binding) until [`Env::pop`].
    pub fn push(&mut self, name: &str, value: i64) {
        self.vars.push((name.to_string(), value));
    }
    /// Sets the innermost binding's value.
    pub fn set_last(&mut self, value: i64) {
        if let Some(last) = self.vars.last_mut() {
            last.1 = value;
        }
    }
    /// Removes the innermost binding.
    pub fn pop(&mut self) {
        self.vars.pop();
    }
    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<i64> {
        self.vars.iter().rev().find(|(n, _)| n == name).map(|(_, v)| *v)
    }
    fn names(&self) -> String {
        let mut names: Vec<&str> = self.vars.iter().map(|(n, _)| n.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        }
    }
}

/// Why an expression (or a label template) could not be evaluated: the text as quoted, the
/// problem, and the 1-based column where the parser stopped when there is one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExprError {
    template: bool,
    text: String,
    problem: String,
    column: Option<usize>,
}

impl ExprError {
    fn expression(text: String, problem: String, column: Option<usize>) -> ExprError {
        ExprError {
            template: false,
            text,
            problem,
            column,
        }
    }
    fn template(text: &str, problem: &str) -> ExprError {
        ExprError {
            template: true,
            text: text.to_string(),
            problem: problem.to_string(),
            column: None,
        }
    }
    /// The expression or template as the message quotes it (cut after 80 characters).
    pub fn text(&self) -> &str {
        &self.text
    }
    /// What is wrong with it, e.g. ``unknown name `j`; names in scope: i, N``.
    pub fn problem(&self) -> &str {
        &self.problem
    }
    /// Where the parser stopped (1-based), for syntax errors.
    pub fn column(&self) -> Option<usize> {
        self.column
    }
}

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.template { "template" } else { "expression" };
        write!(f, "bad {what} `{}`: {}", self.text, self.problem)?;
        if let Some(c) = self.column {
            write!(f, " at column {c}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ExprError {}

/// How deeply parentheses and unary minus signs may nest in one expression (the parser is
/// recursive; past this it stops with an error instead of exhausting the stack).
pub const MAX_EXPR_DEPTH: u32 = 256;

/// A parsed expression: [`compile`] once, then [`Compiled::eval`] in any environment, or
/// [`Compiled::bind`] to one environment's layout for many evaluations (a formula over
/// millions of elements parses once and looks its names up once).
#[derive(Clone, Debug)]
pub struct Compiled {
    root: Node,
    /// The names the expression reads, each once; [`Node::Var`] indexes them.
    names: Vec<String>,
    /// The expression as error messages quote it.
    shown: String,
}

/// The tree. Sums and products are flat lists (the grammar's loops), so evaluation recurses
/// only as deep as parentheses, signs and calls nest: at most [`MAX_EXPR_DEPTH`].
#[derive(Clone, Debug)]
enum Node {
    Int(i64),
    Var(usize),
    Neg(Box<Node>),
    /// `first (op next)*` with op `+`, `-`, `*`, `/` or `%`.
    Chain(Box<Node>, Vec<(u8, Node)>),
    /// `min(..)` (true) or `max(..)` (false), two or more arguments.
    Call(bool, Vec<Node>),
}

struct Parser<'a> {
    src: &'a str,
    pos: usize,
    depth: u32,
    names: Vec<String>,
}

impl Parser<'_> {
    /// The expression as error messages quote it (cut after 80 characters).
    fn shown(&self) -> String {
        shown(self.src)
    }
    fn err(&self, what: &str) -> ExprError {
        ExprError::expression(self.shown(), what.to_string(), Some(self.pos + 1))
    }
    fn skip_ws(&mut self) {
        while self.src[self.pos..].starts_with([' ', '\t']) {
            self.pos += 1;
        }
    }
    fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.src[self.pos..].chars().next()
    }
    fn expr(&mut self) -> Result<Node, ExprError> {
        let first = self.term()?;
        let mut rest = Vec::new();
        while let Some(c @ ('+' | '-')) = self.peek() {
            self.pos += 1;
            rest.push((c as u8, self.term()?));
        }
        Ok(chain(first, rest))
    }
    fn term(&mut self) -> Result<Node, ExprError> {
        let first = self.unary()?;
        let mut rest = Vec::new();
        while let Some(c @ ('*' | '/' | '%')) = self.peek() {
            self.pos += 1;
            rest.push((c as u8, self.unary()?));
        }
        Ok(chain(first, rest))
    }
    fn unary(&mut self) -> Result<Node, ExprError> {
        self.depth += 1;
        if self.depth > MAX_EXPR_DEPTH {
            return Err(self.err(&format!(
                "parentheses and signs nested deeper than {MAX_EXPR_DEPTH}"
            )));
        }
        let v = if self.peek() == Some('-') {
            self.pos += 1;
            self.unary().map(|v| Node::Neg(Box::new(v)))
        } else {
            self.atom()
        };
        self.depth -= 1;
        v
    }
    fn atom(&mut self) -> Result<Node, ExprError> {
        match self.peek() {
            Some('(') => {
                self.pos += 1;
                let v = self.expr()?;
                if self.peek() != Some(')') {
                    return Err(self.err("expected `)`"));
                }
                self.pos += 1;
                Ok(v)
            }
            Some(c) if c.is_ascii_digit() => {
                let start = self.pos;
                while self.src[self.pos..].starts_with(|c: char| c.is_ascii_digit()) {
                    self.pos += 1;
                }
                self.src[start..self.pos]
                    .parse()
                    .map(Node::Int)
                    .map_err(|_| ExprError::expression(self.shown(), "number too large".into(), None))
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let start = self.pos;
                while self.src[self.pos..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                    self.pos += 1;
                }
                let name = &self.src[start..self.pos];
                if self.peek() == Some('(') {
                    return self.call(name);
                }
                let i = match self.names.iter().position(|n| n == name) {
                    Some(i) => i,
                    None => {
                        self.names.push(name.to_string());
                        self.names.len() - 1
                    }
                };
                Ok(Node::Var(i))
            }
            Some(_) => Err(self.err("expected a number, a name or `(`")),
            None => Err(self.err("unexpected end")),
        }
    }
    fn call(&mut self, name: &str) -> Result<Node, ExprError> {
        if name != "min" && name != "max" {
            return Err(ExprError::expression(
                self.src.to_string(),
                format!("unknown function `{name}`; functions: min, max"),
                None,
            ));
        }
        self.pos += 1; // '('
        let mut args = vec![self.expr()?];
        while self.peek() == Some(',') {
            self.pos += 1;
            args.push(self.expr()?);
        }
        if self.peek() != Some(')') {
            return Err(self.err("expected `,` or `)`"));
        }
        self.pos += 1;
        if args.len() < 2 {
            return Err(self.err(&format!("{name} needs at least two arguments")));
        }
        Ok(Node::Call(name == "min", args))
    }
}

/// `first` alone, or the chain of `first` and `rest`.
fn chain(first: Node, rest: Vec<(u8, Node)>) -> Node {
    if rest.is_empty() {
        first
    } else {
        Node::Chain(Box::new(first), rest)
    }
}

/// `src` as error messages quote it (cut after 80 characters).
fn shown(src: &str) -> String {
    match src.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &src[..i]),
        None => src.to_string(),
    }
}

/// Parses `src`; syntax errors (with their column) come here, evaluation errors (overflow,
/// division by zero, an unknown name) from [`Compiled::eval`].
pub fn compile(src: &str) -> Result<Compiled, ExprError> {
    let mut p = Parser {
        src,
        pos: 0,
        depth: 0,
        names: Vec::new(),
    };
    let root = p.expr()?;
    if p.peek().is_some() {
        return Err(p.err("unexpected character"));
    }
    let shown = p.shown();
    Ok(Compiled {
        root,
        names: p.names,
        shown,
    })
}

/// A [`Compiled`] expression with its names found in one environment's layout: valid while
/// that environment binds the same names in the same places (only values change, as with
/// [`Env::set_last`]).
#[derive(Clone, Debug)]
pub struct Bound<'c> {
    compiled: &'c Compiled,
    /// Index into the environment's bindings per name of the expression.
    slots: Vec<usize>,
}

impl Compiled {
    /// Evaluates the expression in `env`, looking each name up as it is read (no allocation:
    /// the path of every expression a workload's expansion evaluates once per use).
    pub fn eval(&self, env: &Env) -> Result<i64, ExprError> {
        self.node(&self.root, &|i| {
            let name = &self.names[i];
            env.get(name).ok_or_else(|| self.unknown(name, env))
        })
    }

    /// Finds every name the expression reads in `env` (the innermost binding, as
    /// [`Env::get`]); an unknown name is an error here.
    pub fn bind(&self, env: &Env) -> Result<Bound<'_>, ExprError> {
        let slots = self
            .names
            .iter()
            .map(|name| {
                env.vars
                    .iter()
                    .rposition(|(n, _)| n == name)
                    .ok_or_else(|| self.unknown(name, env))
            })
            .collect::<Result<_, _>>()?;
        Ok(Bound {
            compiled: self,
            slots,
        })
    }

    fn unknown(&self, name: &str, env: &Env) -> ExprError {
        ExprError::expression(
            self.shown.clone(),
            format!("unknown name `{name}`; names in scope: {}", env.names()),
            None,
        )
    }

    fn arith(&self, r: Option<i64>, what: &str) -> Result<i64, ExprError> {
        r.ok_or_else(|| ExprError::expression(self.shown.clone(), what.to_string(), None))
    }

    /// The value of `node`, each name's (by its index in [`Compiled::names`]) from `var`.
    fn node(&self, node: &Node, var: &impl Fn(usize) -> Result<i64, ExprError>) -> Result<i64, ExprError> {
        match node {
            Node::Int(v) => Ok(*v),
            Node::Var(i) => var(*i),
            Node::Neg(v) => {
                let v = self.node(v, var)?;
                self.arith(v.checked_neg(), "integer overflow")
            }
            Node::Chain(first, rest) => {
                let mut v = self.node(first, var)?;
                for (op, next) in rest {
                    let r = self.node(next, var)?;
                    v = match op {
                        b'+' => self.arith(v.checked_add(r), "integer overflow")?,
                        b'-' => self.arith(v.checked_sub(r), "integer overflow")?,
                        b'*' => self.arith(v.checked_mul(r), "integer overflow")?,
                        b'/' => self.arith(v.checked_div_euclid(r), "division by zero or overflow")?,
                        _ => self.arith(v.checked_rem_euclid(r), "remainder by zero or overflow")?,
                    };
                }
                Ok(v)
            }
            Node::Call(min, args) => {
                let mut v = self.node(&args[0], var)?;
                for a in &args[1..] {
                    let r = self.node(a, var)?;
                    v = if *min { v.min(r) } else { v.max(r) };
                }
                Ok(v)
            }
        }
    }
}

impl Bound<'_> {
    /// Evaluates the expression with the values `env` holds now; `env` must have the layout
    /// it was bound to.
    pub fn eval(&self, env: &Env) -> Result<i64, ExprError> {
        let c = self.compiled;
        c.node(&c.root, &|i| Ok(env.vars[self.slots[i]].1))
    }
}

/// Evaluates `src` in `env` ([`compile`], then [`Compiled::eval`]).
pub fn eval(src: &str, env: &Env) -> Result<i64, ExprError> {
    compile(src)?.eval(env)
}

/// A label template (`"t{i}_{j+1}"`) parsed once, when the workload file is read: its literal
/// text and its `{expr}` parts, each expression compiled. A syntax error (in an expression, or
/// a `{` without `}`) is kept in its place and reported when the template is expanded, so the
/// first error met left to right is the one reported, with the JSON path of its use.
#[derive(Clone, Debug, Default)]
pub struct Template {
    parts: Vec<Part>,
    /// The expansion's first allocation: the template's length and a few digits (the text
    /// around `{}` bounds the literal parts), so most labels take one small allocation.
    capacity: usize,
}

#[derive(Clone, Debug)]
enum Part {
    Lit(String),
    Expr(Result<Compiled, ExprError>),
    /// A structural error; nothing after it is parsed.
    Broken(ExprError),
}

impl Template {
    /// Splits `template` into literal text and compiled `{expr}` parts.
    pub fn parse(template: &str) -> Template {
        Template {
            parts: Self::parts(template),
            capacity: template.len() + 8,
        }
    }

    fn parts(template: &str) -> Vec<Part> {
        let mut parts = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find(['{', '}']) {
            if open > 0 {
                parts.push(Part::Lit(rest[..open].to_string()));
            }
            if rest[open..].starts_with('}') {
                parts.push(Part::Broken(ExprError::template(template, "`}` without `{`")));
                return parts;
            }
            let Some(close) = rest[open..].find('}') else {
                parts.push(Part::Broken(ExprError::template(template, "`{` without `}`")));
                return parts;
            };
            parts.push(Part::Expr(compile(&rest[open + 1..open + close])));
            rest = &rest[open + close + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Lit(rest.to_string()));
        }
        parts
    }

    /// The text of a template without `{expr}` parts, which names the same thing everywhere.
    pub fn literal(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [] => Some(""),
            [Part::Lit(text)] => Some(text),
            _ => None,
        }
    }

    /// The template with each `{expr}` replaced by its value in `env`.
    pub fn expand(&self, env: &Env) -> Result<String, ExprError> {
        use fmt::Write as _;
        let mut out = String::with_capacity(self.capacity);
        for part in &self.parts {
            match part {
                Part::Lit(text) => out.push_str(text),
                Part::Expr(c) => {
                    let v = c.as_ref().map_err(ExprError::clone)?.eval(env)?;
                    // Writing to a String cannot fail.
                    let _ = write!(out, "{v}");
                }
                Part::Broken(e) => return Err(e.clone()),
            }
        }
        Ok(out)
    }
}

impl<'de> serde::Deserialize<'de> for Template {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Template, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Template;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string (a name or label, `{expr}` parts allowed)")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Template, E> {
                Ok(Template::parse(v))
            }
        }
        d.deserialize_str(V)
    }
}

/// Expands `{expr}` parts of a template (`"t{i+1}"` with i=2 gives `"t3"`): [`Template::parse`],
/// then [`Template::expand`].
pub fn expand_template(template: &str, env: &Env) -> Result<String, ExprError> {
    Template::parse(template).expand(env)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Env {
        let mut e = Env::default();
        e.push("N", 10);
        e.push("i", 3);
        e
    }

    #[test]
    fn arithmetic_precedence_and_functions() {
        let e = env();
        assert_eq!(eval("i*64", &e), Ok(192));
        assert_eq!(eval("N - i", &e), Ok(7));
        assert_eq!(eval("(i+1)*2 - -1", &e), Ok(9));
        assert_eq!(eval("-7 / 2", &e), Ok(-4));
        assert_eq!(eval("-7 % 2", &e), Ok(1));
        assert_eq!(eval("min(i, N, 2) + max(i, 4)", &e), Ok(6));
        assert_eq!(expand_template("t{i}_{N-i}", &e).unwrap(), "t3_7");
        assert_eq!(expand_template("plain", &e).unwrap(), "plain");
    }

    /// A formula is parsed once and bound once; each element then only walks the tree (a
    /// 100-term formula over 2^20 elements took 12.2 s re-parsed per element, 3.0 s so).
    #[test]
    fn a_bound_expression_follows_the_environment_s_values() {
        let mut e = env();
        e.push("k", 0);
        let c = compile("min(k * 3 + N, 40) - i % 2").unwrap();
        let b = c.bind(&e).unwrap();
        for k in [0, 5, 13, 100] {
            e.set_last(k);
            let expected = (k * 3 + 10).min(40) - 1;
            assert_eq!((b.eval(&e), c.eval(&e)), (Ok(expected), Ok(expected)), "k={k}");
        }
        // An unknown name is found when binding, with the names in scope.
        assert_eq!(
            compile("k + j").unwrap().bind(&e).unwrap_err().to_string(),
            "bad expression `k + j`: unknown name `j`; names in scope: N, i, k"
        );
        // Long sums and products are flat: 100,000 terms evaluate without deep recursion.
        let long = vec!["1"; 100_000].join(" + ");
        assert_eq!(eval(&long, &e), Ok(100_000));
    }

    #[test]
    fn errors_quote_the_expression() {
        let e = env();
        assert_eq!(
            eval("i+", &e).unwrap_err().to_string(),
            "bad expression `i+`: unexpected end at column 3"
        );
        assert_eq!(
            eval("j*2", &e).unwrap_err().to_string(),
            "bad expression `j*2`: unknown name `j`; names in scope: N, i"
        );
        assert_eq!(
            eval("1/(i-3)", &e).unwrap_err().to_string(),
            "bad expression `1/(i-3)`: division by zero or overflow"
        );
        assert_eq!(
            eval("2 3", &e).unwrap_err().to_string(),
            "bad expression `2 3`: unexpected character at column 3"
        );
        assert!(expand_template("t{i", &e)
            .unwrap_err()
            .to_string()
            .contains("`{` without `}`"));
        // The parts on their own.
        let err = eval("2 3", &e).unwrap_err();
        assert_eq!(
            (err.text(), err.problem(), err.column()),
            ("2 3", "unexpected character", Some(3))
        );
        assert_eq!(eval("j", &e).unwrap_err().column(), None);
    }
}
