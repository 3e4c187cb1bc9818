import type { Problem } from './problem';

/**
 * Grade-school word problems written for this project (not taken from GSM8K), in GSM8K's format:
 * a worked solution with `<<a op b=c>>` annotations and a final `#### <number>`. They let the
 * simulations and tests run offline; the paper's numbers need real GSM8K problems.
 */
const PROBLEMS: [question: string, answer: string][] = [
  [
    'Maya bakes 4 trays of cookies with 18 cookies on each tray. She gives 24 cookies to her neighbours and packs the rest into bags of 6. How many bags does she fill?',
    'Maya bakes 4 * 18 = <<4*18=72>>72 cookies.\nAfter giving some away she has 72 - 24 = <<72-24=48>>48 cookies.\nShe fills 48 / 6 = <<48/6=8>>8 bags.\n#### 8',
  ],
  [
    'A bus leaves the station with 37 passengers. At the first stop 12 people get off and 9 get on. At the second stop half of the passengers get off. How many passengers are left on the bus?',
    'After the first stop there are 37 - 12 = <<37-12=25>>25 passengers, then 25 + 9 = <<25+9=34>>34.\nAt the second stop 34 / 2 = <<34/2=17>>17 get off, so 17 are left.\n#### 17',
  ],
  [
    'Omar saves $15 every week. He already has $40. How many weeks will it take him to have enough money for a bike that costs $190?',
    'Omar still needs 190 - 40 = $<<190-40=150>>150.\nAt $15 a week that takes 150 / 15 = <<150/15=10>>10 weeks.\n#### 10',
  ],
  [
    'A garden has 6 rows of tomato plants with 8 plants in each row. Each plant gives 5 tomatoes. If Lena sells the tomatoes in boxes of 12, how many full boxes can she make?',
    'There are 6 * 8 = <<6*8=48>>48 plants.\nThey give 48 * 5 = <<48*5=240>>240 tomatoes.\nLena makes 240 / 12 = <<240/12=20>>20 boxes.\n#### 20',
  ],
  [
    'A school library has 1,250 books. It lends out 18% of them in September and receives 40 new books. How many books are on the shelves at the end of September?',
    'The library lends out 1250 * 0.18 = <<1250*0.18=225>>225 books.\nThat leaves 1250 - 225 = <<1250-225=1025>>1025 books, and with the new ones 1025 + 40 = <<1025+40=1065>>1065.\n#### 1,065',
  ],
  [
    'Priya runs 3 kilometres on Monday, twice as far on Wednesday, and 4 kilometres less than on Wednesday on Friday. How many kilometres does she run on these three days?',
    'On Wednesday she runs 3 * 2 = <<3*2=6>>6 kilometres.\nOn Friday she runs 6 - 4 = <<6-4=2>>2 kilometres.\nIn total she runs 3 + 6 + 2 = 11 kilometres.\n#### 11',
  ],
  [
    'A pizza is cut into 12 slices. Tom eats 1/4 of the pizza and his sister eats 1/3 of it. How many slices are left?',
    'Tom eats 12 / 4 = <<12/4=3>>3 slices.\nHis sister eats 12 / 3 = <<12/3=4>>4 slices.\nThere are 12 - 3 - 4 = 5 slices left.\n#### 5',
  ],
  [
    'A farmer has 3 times as many chickens as goats. He has 14 goats. Each chicken lays 5 eggs a week. How many eggs do the chickens lay in 2 weeks?',
    'The farmer has 14 * 3 = <<14*3=42>>42 chickens.\nThey lay 42 * 5 = <<42*5=210>>210 eggs a week.\nIn 2 weeks they lay 210 * 2 = <<210*2=420>>420 eggs.\n#### 420',
  ],
  [
    'A phone costs $480. It is on sale for 25% off, and Carla also uses a $30 coupon. How much does she pay?',
    'The discount is 480 * 0.25 = $<<480*0.25=120>>120.\nThe sale price is 480 - 120 = $<<480-120=360>>360.\nWith the coupon Carla pays 360 - 30 = $<<360-30=330>>330.\n#### 330',
  ],
  [
    'A water tank holds 900 litres and is 2/3 full. A hose adds 15 litres per minute. How many minutes does it take to fill the tank?',
    'The tank holds 900 * 2 / 3 = 600 litres now.\nIt needs 900 - 600 = <<900-600=300>>300 more litres.\nThat takes 300 / 15 = <<300/15=20>>20 minutes.\n#### 20',
  ],
  [
    'Ben reads 24 pages a day for 5 days, then 30 pages a day for 3 days. His book has 250 pages. How many pages does he still have to read?',
    'Ben reads 24 * 5 = <<24*5=120>>120 pages, then 30 * 3 = <<30*3=90>>90 pages.\nThat is 120 + 90 = <<120+90=210>>210 pages.\nHe still has 250 - 210 = <<250-210=40>>40 pages to read.\n#### 40',
  ],
  [
    'A theatre has 14 rows of 22 seats. For one show, 35 seats are broken and 187 tickets are sold. How many working seats are empty?',
    'The theatre has 14 * 22 = <<14*22=308>>308 seats.\nOf these 308 - 35 = <<308-35=273>>273 work.\nSo 273 - 187 = <<273-187=86>>86 working seats are empty.\n#### 86',
  ],
];

export const BUILT_IN_PROBLEMS: readonly Problem[] = PROBLEMS.map(([question, answer], index) => ({
  id: `builtin#${index}`,
  question,
  answer,
}));
