"""meshir-opt arguments for a fuzz case: pipelines built from the tree's pass registry (MeshIR
passes with valid and hostile option values, upstream and Shardy passes), the pipelines of
the lit RUN lines, mutated, and the driver's flags."""
from __future__ import annotations

OPTION_VALUES = {
    "bool": ["true", "false", "1", "maybe", ""],
    "int": ["0", "-1", "1", "3", "2147483648", "99999999999999999999", "x"],
}
STRING_VALUES = ['""', "x", "w", "ids", "batch:x", '"batch:x,d_ff:y"', '"b:z"', '"a:(x,y)"', '"a:x,a:y"', '"::"',
                 '"d:(x,x)"', "{}", '"' + "a" * 300 + '"']
UPSTREAM_EXTRA = ["canonicalize{max-iterations=0}", "canonicalize{max-iterations=-1}", "cse", "func.func(cse)",
                  "func.func(canonicalize)", "symbol-dce", "inline", "any(cse)", "builtin.module(cse)"]
FLAGS = [("--split-input-file", 0.2), ("--mlir-print-ir-after-all", 0.04), ("--mlir-print-debuginfo", 0.05),
         ("--verify-each=false", 0.05), ("--mlir-very-unsafe-disable-verifier-on-parsing", 0.05)]


class Pipelines:
    def __init__(self, registry: dict, seed_pipelines: list[str]):
        self.meshir = registry["meshir"]  # name -> [{"name", "type", "default"}]
        self.upstream = registry["upstream"] + UPSTREAM_EXTRA
        self.seeds = seed_pipelines

    def meshir_pass(self, rng) -> str:
        name = rng.choice(sorted(self.meshir))
        options = self.meshir[name]
        if not options or rng.random() < 0.5:
            return name
        chosen = rng.sample(options, rng.randint(1, len(options)))
        parts = [f"{o['name'] if rng.random() > 0.05 else 'bogus'}={self._value(rng, o['type'])}" for o in chosen]
        return name + "{" + " ".join(parts) + "}"

    def _value(self, rng, type_text: str) -> str:
        if type_text.startswith("one of "):
            return rng.choice(type_text[len("one of "):].split("|") + ["bogus", ""])
        return rng.choice(OPTION_VALUES.get(type_text, STRING_VALUES))

    def element(self, rng) -> str:
        return self.meshir_pass(rng) if rng.random() < 0.6 else rng.choice(self.upstream)

    def pipeline(self, rng) -> str:
        if self.seeds and rng.random() < 0.35:
            text = rng.choice(self.seeds)
            if text.startswith("--"):
                return text
            return self._mutate(rng, text)
        elements = [self.element(rng) for _ in range(rng.choice([1, 1, 2, 3, 4]))]
        return "builtin.module(" + ",".join(elements) + ")"

    def _mutate(self, rng, text: str) -> str:
        r = rng.random()
        if r < 0.5:
            return text
        if r < 0.7:
            if text.endswith(")"):
                return text[:-1] + "," + self.element(rng) + ")"
            return text + "," + self.element(rng)
        if r < 0.8:
            k = rng.choice([2, 50, 500, 5000])
            return "builtin.module(" + "builtin.module(" * k + self.element(rng) + ")" * (k + 1)
        cut = rng.randrange(len(text) + 1)
        return text[:cut] + rng.choice(["(", ")", "{", "}", ",", "=", '"', "'", "func.func(", " "]) + text[cut:]

    def args(self, rng, text: str) -> list[str]:
        args = []
        r = rng.random()
        if r < 0.6:
            chosen = self.pipeline(rng)
            args.append(chosen if chosen.startswith("--") else "--pass-pipeline=" + chosen)
        elif r < 0.75:
            args.append("--" + self.meshir_pass(rng).replace("{", "=").rstrip("}"))
        if "expected-" in text and rng.random() < 0.6:
            args.append("--verify-diagnostics")
        for flag, p in FLAGS:
            if rng.random() < p:
                args.append(flag)
        rng.shuffle(args)
        return args
