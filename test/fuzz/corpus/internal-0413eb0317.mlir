// FUZZ-ARGS: []
// FUZZ-FOUND: internal:OverflowError@fromnumeric.py:_wrapreduction on 71f07d4 after 6730 executions
func.func@reshape_changes_element_count(%a:!mtf.tensor<b=2, d=99999999999999999999999999, f32>){%0="mtf.reshape"(%a):(!mtf.tensor<b=2, d=99999999999999999999999999, f32>)-> !mtf.tensor<n=6, f32>
}