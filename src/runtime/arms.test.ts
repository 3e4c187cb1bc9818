import { describe, expect, it } from 'vitest';
import { hintSourceOf } from '../rl/presets';
import { ARM_TITLES, armOf, armSetup, ARMS, DEFAULT_TRAINED_ARMS, isArm, isTrainedArm, OTHER_CHILD_ARMS, TRAINED_ARMS } from './arms';
import { armPreset } from './run-config';

describe('the arms', () => {
  it('include OPD and Combined on another child’s hints, each its method with the other-child hint source', () => {
    expect(TRAINED_ARMS).toEqual(['binary', 'opd', 'combined', 'combined-shuffled', 'opd-other-child', 'combined-other-child']);
    expect(armSetup('opd-other-child')).toEqual({ method: 'opd', hintSource: 'other-child' });
    expect(armSetup('combined-other-child')).toEqual({ method: 'combined', hintSource: 'other-child' });
    expect(armSetup('combined-shuffled')).toEqual({ method: 'combined', hintSource: 'shuffled' });
    expect(armSetup('opd')).toEqual({ method: 'opd', hintSource: 'judge' });
    for (const arm of TRAINED_ARMS) {
      const { method, hintSource } = armSetup(arm);
      // Every arm is the arm its method and hint source make, and has a title.
      expect(armOf(method, hintSource)).toBe(arm);
      expect(ARM_TITLES[arm]).toBeTruthy();
      const preset = armPreset(arm, 'storyteller');
      expect([preset.method, hintSourceOf(preset)]).toEqual([method, hintSource]);
    }
    expect(ARM_TITLES['opd-other-child']).toBe("OPD, another child's hints");
    expect(ARMS).toContain('combined-other-child');
    expect(isArm('opd-other-child') && isTrainedArm('combined-other-child')).toBe(true);
  });

  it('leave the other-child control out of a comparison unless asked, and it differs from its method in the hint source only', () => {
    expect(DEFAULT_TRAINED_ARMS).toEqual(['binary', 'opd', 'combined', 'combined-shuffled']);
    expect(OTHER_CHILD_ARMS).toEqual(['opd-other-child', 'combined-other-child']);
    for (const [arm, method] of [
      ['opd-other-child', 'opd'],
      ['combined-other-child', 'combined'],
    ] as const) {
      const control = armPreset(arm, 'storyteller');
      expect({ ...control, advantage: { ...control.advantage, hintSource: undefined } }).toEqual({
        ...armPreset(method, 'storyteller'),
        advantage: { ...armPreset(method, 'storyteller').advantage, hintSource: undefined },
      });
    }
  });
});
