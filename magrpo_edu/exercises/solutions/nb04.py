"""Reference answers and typical mistakes for notebook 04's exercises."""


def thin_wrapper(main: str) -> bool:
    body = []
    in_doc = False
    for line in main.split("\n")[1:]:
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if in_doc or s.startswith(('"""', "'''")):
            closed = s.endswith(('"""', "'''")) and (in_doc or len(s) > 3)
            in_doc = not closed
            continue
        body.append(s)
    if len(body) == 1:
        return body[0].startswith("return ") and "aux" in body[0]
    if len(body) == 2 and "=" in body[0]:
        var, _, value = body[0].partition("=")
        return value.strip().startswith("aux(") and body[1] == f"return {var.strip()}"
    return not body


def coding_reward(aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    reward = 0.4 if aux_defined else 0.0
    if not main_defined:
        return reward
    reward += 0.6
    if not parses:
        return reward
    reward += 0.5 + passed / total
    if passed >= 1 and aux_defined and calls_aux:
        reward += 0.5 if thin_wrapper else 1.5
    return reward


def _only_return_aux(main: str) -> bool:  # the everyday meaning of "wrapper"
    return "return aux(" in main and main.count("\n") <= 2


def _one_line_any(main: str) -> bool:  # forgets that the line must mention aux
    lines = [x for x in main.split("\n")[1:] if x.strip() and not x.strip().startswith(("#", '"""'))]
    return len(lines) == 1


def _no_gates(aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    return (0.4 * aux_defined + 0.6 * main_defined + 0.5 * parses + passed / total
            + (0.5 if calls_aux else 0) + (1.0 if calls_aux and not thin_wrapper else 0))


def _bonus_without_tests(aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper):
    # forgets the gate "at least one test passed": pays the bonus where no test passed too
    reward = coding_reward(aux_defined, main_defined, parses, passed, total, calls_aux, thin_wrapper)
    if main_defined and parses and passed == 0 and aux_defined and calls_aux:
        reward += 0.5 if thin_wrapper else 1.5
    return reward


SOLUTIONS = {"04.thin_wrapper": thin_wrapper, "04.levels": coding_reward}
MISTAKES = {"04.thin_wrapper": [_only_return_aux, _one_line_any], "04.levels": [_no_gates, _bonus_without_tests]}
