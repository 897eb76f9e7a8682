#!/usr/bin/python3
"""What the calibration's kernel fits (the LM head's and the attention kernel's,
calibration.proto's forward_head ... backward_attention) change in the model's
errors: each `eppsim testbed` output folder's scenario simulated again with its
own calibration, once as written and once without those fits (the layer fits
alone: the head at the scenario GPU's peak, the parts by FLOP share), each
validated against the folder's measured trace. Prints validation_table.py's
Markdown rows, two per folder (the model column names the variant).

    kernel_fits_ablation.py [--eppsim PATH] SCENARIO=DIR [SCENARIO=DIR ...]

e.g. scenarios/validation/sp2.textproto=OUT/sp2 after `eppsim testbed
scenarios/validation/sp2.textproto -o OUT/sp2`. Exit 2 on bad arguments or a
folder without calibration.textproto or measured/trace.pb.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import validation_table

KERNEL_FITS = {f"{p}_{k}{q}" for p in ("forward", "backward") for k in ("head", "attention") for q in ("", "_quality")}


def fail(message):
    print(f"kernel_fits_ablation: {message}", file=sys.stderr)
    sys.exit(2)


def without_kernel_fits(text):
    """The calibration's text format without its top-level kernel-fit blocks."""
    out, depth, skipping = [], 0, False
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if depth == 0 and stripped.endswith("{") and stripped[:-1].strip() in KERNEL_FITS:
            skipping = True
        if not skipping:
            out.append(line)
        depth += line.count("{") - line.count("}")
        if skipping and depth == 0:
            skipping = False
    return "".join(out)


def simulate_and_validate(eppsim, scenario, calibration, measured, work, name, variant):
    simulated = os.path.join(work, name, "simulated")
    subprocess.run([eppsim, "run", scenario, "--set", f"cost_model.calibration_file={os.path.abspath(calibration)}",
                    "-o", simulated, "--log", "warn"], check=True, stdout=subprocess.DEVNULL)
    folder = os.path.join(work, name)
    subprocess.run([eppsim, "validate", "--simulated", os.path.join(simulated, "trace.pb"), "--measured", measured,
                    "-o", folder, "--log", "warn"], check=True, stdout=subprocess.DEVNULL)
    return validation_table.row(folder, name.rsplit("-", 1)[0], variant)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--eppsim", default="build/sim/eppsim")
    parser.add_argument("pairs", nargs="+", metavar="SCENARIO=DIR")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for pair in args.pairs:
            scenario, sep, folder = pair.partition("=")
            if not sep:
                fail(f"{pair}: expected SCENARIO=DIR")
            calibration = os.path.join(folder, "calibration.textproto")
            measured = os.path.join(folder, "measured", "trace.pb")
            for path in (scenario, calibration, measured):
                if not os.path.isfile(path):
                    fail(f"{path}: no such file")
            with open(calibration, encoding="utf-8") as f:
                full = f.read()
            name = os.path.basename(os.path.normpath(folder))
            layer_only = os.path.join(work, f"{name}-layer-fits.textproto")
            with open(layer_only, "w", encoding="utf-8") as f:
                f.write(without_kernel_fits(full))
            for variant, path in (("layer fits only", layer_only), ("with kernel fits", calibration)):
                rows.append(simulate_and_validate(args.eppsim, scenario, path, measured, work, f"{name}-{len(rows)}",
                                                  variant))
    print(validation_table.markdown(rows))


if __name__ == "__main__":
    main()
