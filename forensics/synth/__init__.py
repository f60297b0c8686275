"""Synthetic cases with a known answer: the traffic model (`traffic`) and the writer of logs,
case files and truth.json (`sample`), which also regenerates the bundled GLM-5.3 case."""
