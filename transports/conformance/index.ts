/**
 * The transport conformance suite: the black-box API scenarios every transport runs (DESIGN.md rule 3).
 * @module
 */
export { apiScenarios, type ScenarioTarget } from './suite.ts';
