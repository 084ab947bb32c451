/**
 * Hand-made word lists, one per kind of evidence. They matter because the model's learned word weights
 * only know the vocabulary of the training prompts: a list carries the rule ("a proof is smart work",
 * "Kotlin is a programming language") to words the training set never used. Entries are lower-case
 * words or two-word phrases; the scanner looks up every token and every pair of adjacent tokens. The
 * commonest entries of each list are also given in Spanish, French, German, Portuguese, Italian, Russian
 * (several cases), Chinese and Japanese (two-character words, written as pairs: the scanner reads each
 * ideograph as a token), so that a rule holds in the languages real users write in. The last lines of
 * most lists are those languages' words for the list's concepts, and of the tech list more tool and
 * library names, all written blind and with every word that is also an everyday word struck
 * (docs/routing.md, "Word lists in eight languages, and developer tools").
 */
import { hashString } from './hashing.js';

/** List ids, also the bit positions of `lexMask`. */
export const Lex = {
  CodeNoun: 0,
  Language: 1,
  CodeVerb: 2,
  Keyword: 3,
  Math: 4,
  NumberWord: 5,
  Unit: 6,
  Proof: 7,
  Reasoning: 8,
  Planning: 9,
  SimpleTask: 10,
  Chat: 11,
  Question: 12,
  Logic: 13,
  Tech: 14,
} as const;
export type Lex = (typeof Lex)[keyof typeof Lex];
export const LEX_COUNT = 15;

/**
 * Words are separated by white space; `a_b` is the two-word phrase "a b" (the scanner splits words at
 * any character other than a letter, a digit or '_', so "step-by-step" is looked up as its word pairs).
 */
const LISTS: Record<Lex, string> = {
  [Lex.CodeNoun]: `code codes coding snippet function functions method methods class classes program programs script
    scripts algorithm algorithms api apis endpoint endpoints regex regexp regular_expression query
    queries sql database databases schema bug bugs compiler syntax variable variables loop loops
    recursion recursive array arrays linked_list hashmap hash_table dictionary tuple tuples stack_trace
    traceback exception exceptions unittest unit_test unit_tests test_cases repository repo git github
    commit dockerfile docker kubernetes yaml json xml html css latex markdown cli terminal command_line
    makefile webpack npm pip library libraries framework module modules runtime stdout stdin argv lambda
    closure iterator decorator callback thread threads mutex pointer pointers struct enum inheritance
    constructor oop binary_tree data_structure data_structures time_complexity leetcode pseudocode
    source_code codebase backend frontend microservice http_request rest_api graphql orm
    spreadsheet_formula excel_formula sheets_formula formula_for vba macro plugin sdk ide debugger
    segfault null_pointer boilerplate código función funciones clase variables bucle bucles archivo
    archivos diccionario librería biblioteca módulo excepción compilador sintaxis algoritmo função
    funções arquivo exceção fonction fonctions fichier requête bibliothèque compilateur syntaxe
    algorithme funktion funktionen datei abfrage bibliothek kompilierfehler algorithmus codice funzione
    ciclo stringa код кода коде функция функции функцию функций переменная переменной переменные
    переменную цикл цикла массив массива массивы массиве файл файла файлы файлов файле модуль модуля
    скрипт скрипта исключение компилятор синтаксис алгоритм регулярное_выражение база_данных базы_данных
    базе_данных 代_码 函_数 程_序 编_程 列_表 数_组 字_符 变_量 循_环 报_错 脚_本 接_口 调_试 编_译 算_法 框_架 模_块 插_件 関_数 配_列 変_数 字_列
    実_装 例_外
    tupla tuplas flotante flotantes iteración iteracion iteraciones recursión recursividad funcion parámetro
    parametro parámetros parametros compiladores fichero ficheros directorio directorios bbdd
    expresión_regular expresion_regular expresiones_regulares servidor servidores depurador algoritmos
    ordenamiento ordenación ordenacion puntero punteros código_fuente codigo_fuente repositorio repositorios
    gráfica grafica gráficas graficas gráfico grafico gráficos graficos codificación codificacion
    marca_temporal vetor vetores matrizes ponto_flutuante iteração iteracao iterações iteracoes recursão
    recursao recursividade funcao funcoes variável variavel variáveis variaveis parâmetro parâmetros
    interpretador interpretadores arquivos ficheiro ficheiros diretório diretorio diretórios diretorios
    expressão_regular expressao_regular expressões_regulares expressoes_regulares requisição requisicao
    requisições requisicoes sintaxe ordenação ordenacao ponteiro ponteiros código_fonte codigo_fonte
    repositório repositórios codificação codificacao flottant flottants itération itérations récursivité
    recursivite récursion paramètre parametre paramètres parametres compilateurs interpréteur interpreteur
    fichiers bdd expression_régulière expression_reguliere expressions_régulières expressions_regulieres
    requete requêtes requetes débogueur debogueur algorithmes pointeur pointeurs fuite_mémoire fuite_memoire
    code_source déploiement deploiement graphique graphiques encodage octet octets horodatage bogue bogues
    zeichenkette zeichenketten matrizen tupel ganzzahl ganzzahlen gleitkommazahl gleitkommazahlen
    fließkommazahl fliesskommazahl schleife schleifen iterationen rekursion variablen rückgabewert
    rueckgabewert fehlermeldung fehlermeldungen kompilierer dateien verzeichnis verzeichnisse datenbank
    datenbanken indizes regulärer_ausdruck regulaerer_ausdruck reguläre_ausdrücke regulaere_ausdruecke
    abfragen algorithmen datenstruktur datenstrukturen speicherleck speicherlecks stapelüberlauf quellcode
    quelltext diagramm diagramme zeitstempel kodierung codierung zeichenkodierung stringhe vettore vettori
    matrici virgola_mobile iterazione iterazioni ricorsione ricorsività ricorsivita funzioni variabile
    variabili parametri valore_restituito compilatore compilatori espressione_regolare espressioni_regolari
    sintassi algoritmi struttura_dati strutture_dati ordinamento puntatore puntatori codice_sorgente grafici
    codifica строка строки строке строку строкой строк строками строках массиву массивом массивов массивами
    массивах матрице матрицу матрицей матриц матрицами кортеж кортежа кортеже кортежем кортежи кортежей
    целое_число целые_числа целого_числа целых_чисел плавающей_точкой плавающей_запятой плавающая_точка циклу
    цикле циклом циклы циклов циклах итерация итерации итерацию итерацией итераций рекурсия рекурсии рекурсию
    рекурсией функцией функциях функциями переменных переменными параметр параметра параметре параметром
    параметры параметров возвращаемое_значение возвращаемого_значения компилятора компиляторе компилятором
    компиляторы интерпретатор интерпретатора интерпретаторе консоль консоли консолью скрипте скриптом скрипты
    скриптов модуле модулем модули модулей файлом файлами файлах директория директории директорию директорий
    базу_данных баз_данных бд столбец столбца столбце столбцом столбцы столбцов регулярные_выражения
    регулярного_выражения регулярных_выражений регулярка регулярки сервер сервера сервере сервером серверы
    серверов фреймворк фреймворка фреймворке фреймворки фреймворков плагин плагина плагины плагинов отладчик
    отладчика отладчике синтаксиса синтаксисе алгоритма алгоритме алгоритмом алгоритмы алгоритмов
    структура_данных структуры_данных структур_данных сортировка сортировки сортировку сортировкой
    утечка_памяти утечки_памяти переполнение_стека переполнения_стека исходный_код исходного_кода
    исходном_коде репозиторий репозитория репозитории репозиториев коммит коммита коммиты коммитов баг бага
    баги багов деплой деплоя датафрейм датафрейма датафрейме датафреймы временная_метка кодировка кодировки
    кодировку кодировкой байт байта байтов байты 元_组 整_数 整_型 迭_代 递_归 终_端 字_段 索_引 下_标 正_则 指_针 线_程 源_码 图_表 字_节
    比_特 反_復 再_帰 引_数 添_字 構_文 バ_グ`,
  [Lex.Language]: `python javascript typescript java kotlin scala swift rust golang ruby php perl lua haskell
    elixir erlang clojure ocaml fortran cobol matlab julia dart groovy bash zsh powershell sql mysql postgres
    postgresql sqlite nosql mongodb html css scss sass jsx tsx react vue angular svelte nodejs django flask
    fastapi rails numpy pandas pytorch tensorflow sklearn jquery cpp csharp assembly verilog vhdl solidity
    prolog lisp racket latex yaml toml awk jq terraform ansible webassembly cuda c_language go_language`,
  [Lex.CodeVerb]: `implement implementing implemented implementation refactor refactoring debug debugging
    compile compiling deploy deploying instantiate override parse parsing serialize deserialize tokenize
    memoize vectorize transpile write_code write_function write_program write_script write_class
    write_query a_function a_program a_script a_method a_class the_function the_code this_code my_code
    function_that program_that script_that method_that function_to program_to script_to fix_this complete_this
    convert_this
    implementar programar depurar compilar implementa programa_que función_que implémenter programmer
    déboguer compiler implementieren programmieren debuggen kompilieren implementare реализовать
    реализовать_функцию написать_функцию написать_код написать_программу напишите_функцию напиши_функцию
    напиши_программу напишите_программу отладить скомпилировать 实_现 调_用 编_写
    implementando implementado implementación implementacion depurando debuggear debugear compilando compilado
    ejecutar ejecutando ejecutado iterar iterando parsear parseando parseado concatenar concatenando
    concatenado inicializar inicializando inicializado instanciar instanciando instanciado refactorizar
    refactorizando refactorización refactorizacion graficar graficando scrapear castear implementação
    implementacao debugar debugando executar executando executado refatorar refatorando refatoração
    refatoracao plotar plotando implementer implémenté implemente implémentation deboguer débugger débuguer
    exécuter executer exécuté itérer iterer concaténer concatener concaténé concatene initialiser initialisé
    instancier instancié instancie refactoriser refactorer implementiert implementierung programmiert debuggt
    kompiliert iterieren iteriert parsen geparst konkatenieren initialisieren initialisiert instanziieren
    instanziiert refaktorisieren refactoren refaktorieren deployen plotten geplottet scrapen implementato
    debuggare iterare parsare parsificare concatenare concatenato inizializzare inizializzato istanziare
    istanziato refattorizzare deployare plottare программировать запрограммировать программирование отлаживать
    отладка отладки дебажить компилировать итерировать отсортировать сортировать отсортированный парсить
    распарсить спарсить парсинг парсинга конкатенировать конкатенация инициализировать инициализация
    инициализации прочитать_файл считать_файл чтение_файла запись_файла записать_файл рефакторинг рефакторить
    задеплоить деплоить 遍_历 读_取 写_入 重_构 爬_虫 爬_取 走_査 置_換`,
  [Lex.Keyword]: `def elif lambda import include printf println console const var let async await struct fn
    impl pub mut foreach typeof instanceof namespace usepackage documentclass begin end return returns void
    bool boolean int str len nullptr nil null none self sizeof malloc argc args kwargs init main_function
    group_by order_by create_table insert_into select_from where_clause`,
  [Lex.Math]: `equation equations solve solving calculate calculation compute computing integral integrals
    derivative derivatives differentiate integrate probability probabilities sum product integer
    integers prime primes divisible divisor remainder modulo factorial polynomial polynomials quadratic
    cubic matrix matrices vector vectors determinant eigenvalue logarithm exponent exponential
    inequality inequalities expression simplify evaluate arithmetic algebra geometry trigonometry
    calculus triangle triangles circle radius diameter circumference area perimeter volume angle angles
    hypotenuse slope intercept coordinate coordinates percent percentage average mean median variance
    deviation ratio proportion fraction fractions decimal how_many how_much how_long how_old how_far
    sqrt square_root cube_root squared cubed digits numerator denominator multiply multiplied divide
    divided subtract subtracted plus minus times expected_value combinatorics permutations combinations
    odds dice coin sequence series converge diverge formula statistics gcd lcm math maths mathematical
    ecuación ecuaciones resolver calcular cálculo integral derivada probabilidad primo matriz vector
    fórmula raíz fracción porcentaje promedio équation résoudre calculer calcul intégrale dérivée
    probabilité matrice vecteur pourcentage moyenne gleichung lösen berechnen berechnung ableitung
    wahrscheinlichkeit zahl primzahl bruch prozent durchschnitt equação cálculo derivada probabilidade
    fração porcentagem média уравнение уравнения уравнений решить решите вычислить вычислите посчитать
    интеграл производная производную вероятность произведение матрица матрицы вектор дробь процент
    процентов среднее 方_程 计_算 积_分 导_数 概_率 求_和 质_数 素_数 矩_阵 向_量 百_分 平_均 数_学 几_何 代_数 三_角 計_算 積_分 微_分 確_率
    数_学 平_均
    ecuacion derivadas probabilidades número_primo numero_primo números_primos numeros_primos divisibles
    factoriales polinomio polinomios cuadrática cuadratica ecuación_cuadrática ecuacion_cuadratica vectores
    valor_propio valores_propios autovalor autovalores logaritmo logaritmos teoremas inecuación inecuacion
    inecuaciones funcion fraccion fracciones raíz_cuadrada raiz_cuadrada media_aritmética media_aritmetica
    geometría geometria triángulo triangulo triángulos triangulos perímetro perimetro circunferencia
    estadística estadistica desviación_estándar desviacion_estandar desviación_típica desviacion_tipica
    varianza combinatoria permutación permutacion permutaciones equacao equações equacoes divisível divisivel
    divisíveis divisiveis fatorial polinômio polinómio polinômios quadrática quadratica matrizes vetor vetores
    inequação inequacao inequações inequacoes funcao funcoes fracao frações fracoes raiz_quadrada
    média_aritmética triângulo circunferência estatística estatistica desvio_padrão desvio_padrao variância
    variancia combinatória permutação permutacao permutações permutacoes équations intégrales integrales
    derivee dérivées derivees probabilite probabilités probabilites nombre_premier nombres_premiers
    factorielle polynôme polynome polynômes polynomes quadratique vecteurs valeur_propre valeurs_propres
    logarithme logarithmes theoreme théorèmes theoremes inéquation inequation inéquations inequations
    racine_carrée racine_carree moyenne_arithmétique moyenne_arithmetique géométrie geometrie périmètre
    perimetre écart_type ecart_type combinatoire gleichungen integrale ableitungen primzahlen teilbar polynom
    quadratische_gleichung matrizen vektor vektoren determinante eigenwert eigenwerte logarithmus ungleichung
    ungleichungen bruchrechnung quadratwurzel arithmetisches_mittel prozentrechnung dreieck flächeninhalt
    statistik standardabweichung varianz kombinatorik permutationen equazione equazioni derivata derivate
    probabilità probabilita numeri_primi divisibile divisibili fattoriale polinomi matrici vettore vettori
    autovalore autovalori logaritmi teoremi disequazione disequazioni funzioni radice_quadrata triangolo
    circonferenza statistica deviazione_standard permutazione permutazioni уравнением уравнениях вычисление
    интеграла интегралы интегралов производной производные вероятности простое_число простые_числа
    простого_числа простых_чисел кратен факториал факториала многочлен многочлена многочлены полином полинома
    квадратное_уравнение квадратного_уравнения квадратные_уравнения матрицу вектора векторы векторов
    определитель определителя собственное_значение собственные_значения логарифм логарифма логарифмы теорему
    леммы дроби квадратный_корень квадратного_корня среднее_арифметическое геометрия геометрии треугольник
    треугольника треугольнике треугольники периметр периметра окружность окружности статистика статистики
    стандартное_отклонение среднеквадратическое_отклонение дисперсия дисперсии комбинаторика комбинаторики 整_除
    余_数 阶_乘 对_数 级_数 数_列 周_长 半_径 方_差 階_乗 対_数 極_限 級_数 補_題 分_数 幾_何 周_長 円_周 順_列`,
  [Lex.NumberWord]: `one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty
    fifty sixty seventy eighty ninety hundred hundreds thousand thousands million millions billion half
    halves third thirds quarter quarters twice thrice double doubled triple tripled dozen dozens pair pairs
    each every per apiece remaining leftover altogether in_total more_than less_than fewer_than as_many
    as_much`,
  [Lex.Unit]: `dollar dollars cent cents euro euros pound pounds rupees yen price prices cost costs paid pays
    pay earns earned earn salary wage hourly discount profit budget minute minutes hour hours day days week
    weeks month months year years seconds mile miles km kilometer kilometers meter meters metre metres feet
    foot inch inches yard yards kg kilogram kilograms gram grams liter liters litre litres gallon gallons
    ounce ounces mph speed`,
  [Lex.Proof]: `prove proves proving proof proofs theorem theorems lemma lemmas corollary axiom axioms derive
    derives deriving derivation deduce deduced deduction deductive induction inductive contradiction
    contrapositive irrational rigorous rigorously formally qed iff implies implication entails
    entailment valid invalid validity premise premises conclusion syllogism fallacy fallacies logic
    logical logically tautology satisfiable propositional predicate quantifier quantifiers necessarily
    show_that verify_that demonstrate_that if_and only_if demostrar demuestra demuestre demostración
    teorema lema démontrer démontrez démonstration prouver preuve théorème lemme beweisen beweise beweis
    provar prove demonstrar доказать докажите доказательство теорема теоремы лемма 证_明 定_理 引_理 推_导 証_明
    demostracion demostraciones demuestra_que demuestre_que pruebe_que prueba_que muestre_que verifica_que
    verifique_que comprueba_que corolario corolarios axioma axiomas derivar derivación derivacion deducir
    deduzca deducción deduccion inducción induccion inducción_matemática induccion_matematica contradicción
    contradiccion por_contradicción irracional irracionales riguroso rigurosa rigurosamente formalmente
    implica implicación implicacion premisa premisas conclusión silogismo silogismos falacia falacias lógica
    logica lógico logico tautología tautologia necesariamente demonstre demonstração demonstracao
    demonstrações demonstracoes prove_que demonstre_que mostre_que corolário corolários derivação derivacao
    deduzir deduza dedução deducao indução inducao indução_matemática contradição contradicao por_absurdo
    irracionais rigoroso rigorosa rigorosamente implicação implicacao premissa premissas conclusão conclusao
    falácia falácias necessariamente prouve prouvez preuves demontrer demontrez démontre demontre
    démonstrations montrer_que montrez_que montre_que démontrer_que démontrez_que vérifier_que vérifiez_que
    lemmes corollaire corollaires axiome axiomes dérivation déduire deduire déduisez déduction récurrence
    par_récurrence par_recurrence irrationnel irrationnelle irrationnels rigoureux rigoureuse
    rigoureusement formellement implique prémisse premisse prémisses syllogisme sophisme paralogisme logique
    logiques tautologie nécessairement necessairement beweises beweist beweise_dass beweisen_sie zeige_dass
    korollar folgerung herleiten herleitung leite_her deduzieren deduktion induktion vollständige_induktion
    vollstaendige_induktion widerspruch widerspruchsbeweis irrationale irrationalität rigoros impliziert
    implikation prämisse praemisse prämissen schlussfolgerung syllogismus fehlschluss trugschluss logik
    logisch logische notwendigerweise dimostra dimostrare dimostrazione dimostrazioni dimostra_che
    dimostrare_che mostra_che verifica_che corollario corollari assioma assiomi derivazione dedurre deduci
    deduzione induzione contraddizione per_assurdo irrazionale irrazionali implicazione premessa premesse
    conclusione sillogismo fallacia fallacie докажи доказательства доказательстве доказательством докажи_что
    покажи_что покажите_что теореме лемму лемме аксиома аксиомы аксиому аксиом выведи_формулу вывод_формулы
    дедукция дедукции дедуктивно индукция индукции индукцию по_индукции противоречие противоречия
    от_противного иррациональное иррационально иррациональным иррациональность строгое_доказательство
    формально импликация умозаключение силлогизм софизм логика логики логике логику логический логическая
    логически тавтология 推_论 公_理 演_绎 反_证 严_谨 蕴_含 前_提 结_论 谬_误 逻_辑 必_然 充_要 命_题 求_证 试_证 证_毕 论_证 導_出 演_繹 帰_納 矛_盾
    背_理 厳_密 含_意 結_論 論_理 論_証 検_証 示_せ 同_値 命_題 誤_謬 詭_弁`,
  [Lex.Reasoning]: `reason reasoning reasons step_by by_step explain_your your_reasoning think_through estimate
    estimation estimating approximately puzzle puzzles riddle riddles brainteaser infer inference determine
    figure_out work_out which_of true_or or_false uncertain paradox hypothesis counterexample analyze analyse
    analysis tradeoff tradeoffs compare contrast consequences implications scenario scenarios optimal
    optimize optimise maximize minimize constraint constraints worst_case sudoku chess liar lies tells_the
    shuffled swap swaps trade trades order_of deduce
    razonamiento razonamientos razona razonar estima estimar estimación estimacion aproximadamente acertijo
    acertijos adivinanza adivinanzas rompecabezas infiere inferir inferencia determina determinar verdadero_o
    paradoja paradojas hipótesis hipotesis contraejemplo contraejemplos analiza analizar analice análisis
    analisis costo_beneficio coste_beneficio compara comparar comparación comparacion contrasta contrastar
    consecuencias implicaciones escenario escenarios óptimo optimo óptima optima optimiza optimizar
    optimización optimizacion maximiza maximizar minimiza minimizar restricción restriccion restricciones
    peor_caso ventajas desventajas evalúa_críticamente evalua_criticamente justifica justificar argumenta
    argumentar argumento argumentos evalúa evalua evaluar diagnóstico diagnostico interpretación
    interpretacion interpreta causas razonadamente reflexiona raciocínio raciocinio raciocine estime
    estimativa estimativas quebra_cabeça quebra_cabeca charada charadas infira inferência verdadeiro_ou
    paradoxo paradoxos hipótese hipotese hipóteses contraexemplo contra_exemplo analise analisar análise
    análises custo_benefício custo_beneficio comparação comparacao consequências consequencias implicações
    implicacoes cenário cenario cenários otimizar otimize otimização otimizacao restrição restricao restrições
    pior_caso vantagens desvantagens prós avalie_criticamente justifique argumente avalie avaliar
    interpretação interpretacao reflita raisonnement raisonnements raisonne raisonner étape_par estimer
    estimez approximativement énigme enigme énigmes devinette devinettes casse_tête casse_tete inférer
    inférence détermine déterminer determiner déterminez vrai_ou paradoxe hypothèse hypothese hypothèses
    contre_exemple contre_exemples analyser analysez comparer comparez comparaison comparaisons conséquences
    scénario scénarios optimale optimiser optimisez maximiser minimiser contrainte contraintes pire_cas
    avantages inconvénients inconvenients justifie justifier justifiez argumenter évalue evalue évaluer
    evaluer évaluez interprétation interpréter réfléchis reflechis compromis begründung begruendung begründe
    begruende begründen schrittweise schritt_für schätzung schaetzung abschätzung schätze_ab ungefähr
    ungefaehr rätsel raetsel denksportaufgabe knobelaufgabe schlussfolgern folgere folgern inferenz bestimme
    wahr_oder paradoxon hypothesen gegenbeispiel analysiere analysieren vergleiche vergleichen vergleich
    gegenüberstellung konsequenzen auswirkungen szenario szenarien optimiere optimieren optimierung maximiere
    maximieren minimiere minimieren nebenbedingung nebenbedingungen einschränkung einschränkungen
    schlimmsten_fall vorteile nachteile kritisch_bewerten bewerte bewerten bewertung beurteile beurteilen
    rechtfertige argumentiere argumentieren interpretiere ursache ursachen abwägung abwägen durchdenke
    überlege ragionamento ragionamenti ragiona ragionare passo_passo stima stimare approssimativamente
    indovinello indovinelli enigmi rompicapo inferisci inferire inferenza determinare vero_o paradosso
    paradossi ipotesi controesempio analizza analizzare analisi confronta confrontare confronto paragona
    paragonare conseguenze implicazioni scenari ottimale ottimizza ottimizzare ottimizzazione massimizza
    massimizzare minimizza minimizzare vincolo vincoli caso_peggiore vantaggi svantaggi valuta_criticamente
    valutare valutazione giustifica giustificare argomenta argomentare argomentazione diagnosi interpretazione
    rifletti compromesso рассуждение рассуждения рассуждай рассуди пошагово поэтапно шаг_за оцени оценить
    оценка оценку оценки примерно приблизительно головоломка головоломки головоломку загадка загадки загадку
    сделай_вывод определи определить выясни правда_или парадокс парадокса гипотеза гипотезы гипотезу
    контрпример проанализируй проанализировать проанализируйте анализ анализа анализе анализом компромисс
    сравни сравнить сравните сравнение сравнения сопоставь сопоставить последствия последствий следствие
    сценарий сценарии сценария оптимальный оптимально оптимальное оптимальная оптимизируй оптимизировать
    оптимизация максимизировать минимизировать ограничение ограничения худший_случай худшем_случае плюсы
    минусы критически_оцени обоснуй обосновать обоснование аргументируй аргумент аргументы аргументов
    аргументация оцените диагноз диагностика интерпретация интерпретируй причина причины причину подумай
    поразмышляй 推_理 逐_步 估_算 近_似 谜_题 谜_语 难_题 推_断 推_测 推_算 判_断 真_假 对_错 悖_论 假_设 假_说 反_例 分_析 辨_析 权_衡 取_舍 比_较 对_比
    后_果 场_景 情_景 最_优 优_化 约_束 最_坏 利_弊 优_劣 评_估 评_价 批_判 论_据 论_点 辩_论 诊_断 解_读 原_因 思_考 理_由 反_驳 推_論 推_定 概_算 難_問 推_測
    判_定 真_偽 正_誤 逆_説 仮_説 仮_定 解_析 比_較 対_比 帰_結 想_定 最_適 制_約 最_悪 長_所 短_所 利_点 欠_点 評_価 検_討 根_拠 論_拠 議_論 主_張 診_断 解_釈
    考_察 熟_考`,
  [Lex.Planning]: `plan plans planning itinerary itineraries schedule schedules scheduling syllabus curriculum
    roadmap roadmaps design designing architecture architect blueprint workflow workflows milestone
    milestones timeline timelines allocate allocation logistics phases lesson_plan business_plan
    project_plan study_plan marketing_plan meal_plan training_plan requirements specification system_design
    scalable scalability capacity strategy strategies multi_step
    planificar itinerario estrategia diseño arquitectura planifier itinéraire stratégie architecture
    planen reiseplan strategie architektur planejar roteiro estratégia план плана планирование
    спланировать расписание маршрут стратегия стратегию архитектура архитектуру 计_划 规_划 行_程 策_略 架_构
    设_计 計_画 設_計 戦_略
    planifica planificación planificacion planea planear itinerarios horario horarios cronograma cronogramas
    calendario temario currículo curriculo diseña disena diseñar disenar diseno hito hitos línea_temporal
    linea_temporal asignar logística logistica fases etapas plan_semanal plan_nutricional plan_alimenticio
    plan_financiero presupuesto presupuestos propuesta propuestas viabilidad factibilidad requisitos
    especificación especificacion especificaciones escalable escalabilidad estrategias estratégico
    menú_semanal plano planos planeje planejamento planeamento roteiros itinerário calendário grade_curricular
    projete projetar arquitetura etapa aloque alocar plano_alimentar plano_semanal cardápio_semanal orçamento
    orcamento orçamentos proposta propostas viabilidade especificação especificacao especificações escalável
    escalavel escalabilidade estratégias estrategico planifie planifiez planification itineraire itinéraires
    calendrier cursus concevoir conçois concois jalon jalons chronologie échéancier echeancier rétroplanning
    répartir allouer logistique étapes etapes plan_alimentaire
    budgétaire devis faisabilité faisabilite exigences cahier_des spécifications spécification évolutif
    evolutif scalabilité stratégies planung reiseroute zeitplan stundenplan lehrplan fahrplan entwirf entwerfe
    entwerfen entwurf bauplan arbeitsablauf meilenstein meilensteine zeitleiste zeitstrahl zuweisen zuteilen
    logistik phasen unterrichtsplan unterrichtsentwurf businessplan geschäftsplan projektplan lernplan
    marketingplan ernährungsplan essensplan trainingsplan wochenplan anforderungen spezifikation pflichtenheft
    lastenheft systemdesign skalierbar skalierbarkeit kapazität kapazitaet kapazitätsplanung strategien
    budgetplan haushaltsplan forschungsantrag projektantrag machbarkeit machbarkeitsstudie risikobewertung
    risikoanalyse konzept konzeption mehrstufig pianifica pianificare pianificazione itinerari cronoprogramma
    curricolo progetta progettare progettazione architettura traguardo tappe fasi cronologia allocare alloca
    piano_alimentare piano_aziendale piano_marketing piano_studi piano_settimanale
    requisiti specifiche scalabile scalabilità scalabilita strategia preventivo proposte fattibilità
    fattibilita valutazione_rischi analisi_rischi планы плане планом спланируй планирования маршрута
    расписания учебный_план силлабус учебная_программа дорожная_карта дорожную_карту спроектируй
    спроектировать проектирование дизайн архитектуры рабочий_процесс этап этапы этапов этапа веха вехи
    таймлайн хронология распредели распределить логистика логистики фазы план_урока конспект_урока бизнес_план
    план_проекта план_обучения маркетинговый_план план_питания план_тренировок программа_тренировок требования
    требований техническое_задание спецификация спецификации масштабируемость масштабируемый стратегии
    многоэтапный поэтапный бюджет бюджета смета коммерческое_предложение осуществимость оценка_рисков
    анализ_рисков 日_程 课_表 课_程 蓝_图 流_程 分_配 物_流 后_勤 阶_段 教_案 方_案 需_求 规_格 容_量 产_能 战_略 预_算 提_案 开_题 可_行 安_排 营_销 进_度
    排_期 统_筹 筹_备 制_定 拟_定 攻_略 企_画 旅_程 予_定 工_程 課_程 構_想 手_順 段_階 期_限 配_分 献_立 要_件 仕_様 予_算 事_業 方_針 施_策 立_案 策_定 日_課`,
  [Lex.SimpleTask]: `summarize summarise summary summaries summarization tldr classify classification categorize
    categorise category categories label labels sentiment positive negative neutral translate translation
    translated extract extraction paraphrase paraphrased rephrase rewrite rewritten reword proofread grammar
    grammatical spelling title titles headline headlines tweet tweets email emails caption captions keywords
    synonym synonyms antonym antonyms define definition meaning identify spam topic tone emotion fill_in
    shorten shorter bullet bullets outline slogan tagline hashtags recommend suggest describe polite formal
    informal
    traduce traducir traducción resume resumir resumen reescribe corrige clasifica traduire traduis
    traduction résumer résume résumé reformuler corriger übersetze übersetzen zusammenfassung zusammenfassen
    umschreiben korrigieren traduza traduzir tradução resumir resumo reescrever переведи перевести перевод
    перескажи резюме исправь перефразируй 翻_译 总_结 摘_要 改_写 润_色 分_类 翻_訳 要_約
    resúmenes resumenes resuma resúmelo resumelo sintetiza clasificar clasificación clasificacion categoriza
    categorizar categoría categoria categorías categorias etiqueta etiquetas etiquetar traduccion traducciones
    tradúceme traduceme extrae extraer parafrasea parafrasear paráfrasis parafrasis reformula reformular
    reescribir corregir ortografía ortografia gramática gramatica título titulo títulos titulos titular
    titulares tuit correo correos correo_electrónico correo_electronico palabras_clave sinónimo sinonimo
    sinónimos sinonimos antónimo antonimo antónimos antonimos definir definición definicion definiciones
    significado significa identifica identificar tema temas tono acorta acortar viñetas vinetas esquema
    esquemas eslogan eslóganes eslogans describir descripción descripcion más_formal mas_formal enumera
    enumerar menciona nombra resumos classifique classificar classificação classificacao rótulo rotulo rótulos
    rotulos traducao traduções traducoes extraia extrair parafraseie paráfrase parafrase reformule reescreva
    revisar manchete manchetes tuíte tuite legenda legendas palavras_chave sinônimo sinônimos antônimo
    antônimos defina definição definicao definições identifique encurte encurtar tópicos topicos esboço esboco
    descreva descrever descrição descricao mais_formal corrija corrigir liste listar enumere resumer résumés
    résumez resumez synthèse synthese classer catégoriser categoriser catégorise catégorie categorie
    catégories étiquette étiquettes traduisez traductions extrais extraire paraphraser reformulez réécris
    reecris réécrire reecrire corrigez orthographe grammaire titre titres courriel légende legende légendes
    mots_clés mots_cles synonyme synonymes antonyme antonymes définis definis définir définition définitions
    signification signifie identifie thème raccourcis raccourcir puces décris decris décrire decrire décrivez
    poli formel informel énumère énumérer listez fasse_zusammen fass_zusammen zusammenfassungen klassifiziere
    klassifizieren klassifizierung kategorisiere kategorisieren kategorie kategorien stimmungsanalyse
    uebersetze uebersetzen übersetzung uebersetzung extrahiere extrahieren paraphrasiere paraphrasieren
    umformulieren formuliere_um schreibe_um schreib_um korrekturlesen korrigiere rechtschreibung grammatik
    überschrift ueberschrift titel schlagzeile bildunterschrift schlüsselwörter schluesselwoerter schlagwörter
    stichwörter gegenteil definiere definieren bedeutung bedeutet identifiziere identifizieren thema themen
    tonfall kürzen kuerzen stichpunkte stichpunkten aufzählungspunkte gliederung werbespruch beschreibe
    beschreiben beschreibung höflich hoeflich höflicher formell förmlich informell zähle_auf aufzählen nenne
    riassumi riassumere riassunto riassunti sintesi sintetizza classificare classificazione categorizza
    categorizzare etichetta etichette traduci tradurre traduzione traduzioni estrai estrarre parafrasi
    parafrasare parafrasa riformula riformulare riscrivi riscrivere correggi correggere grammatica titolo
    titoli didascalia didascalie parole_chiave sinonimi antonimi definisci definire definizione definizioni
    significato identificare argomento accorcia accorciare elenco_puntato scaletta descrivi descrivere
    descrizione cortese formale informale elenca elencare elenco кратко пересказать пересказ резюмируй
    суммаризируй суммаризация саммари краткое_содержание выжимка классифицируй классифицировать классификация
    категоризируй категория категории категорию метка метки тональность перевода переводе извлеки извлечь
    перефразировать перепиши переписать переформулируй орфография орфографию орфографии грамматика грамматику
    грамматики пунктуация заголовок заголовки твит письмо письма ключевые_слова синоним синонимы антоним
    антонимы дай_определение определение определения означает выдели тема темы тему тон сократи сократить
    по_пунктам списком тезисы слоган слоганы опиши описать описание вежливо вежливый неформально официальный
    перечисли перечислить назови назовите 概_括 归_纳 归_类 类_别 标_签 情_感 提_取 抽_取 复_述 重_写 校_对 语_法 拼_写 标_题 推_文 邮_件 文_案
    字_幕 近_义 反_义 定_义 含_义 释_义 识_别 主_题 话_题 语_气 缩_短 精_简 要_点 提_纲 大_纲 口_号 标_语 描_述 描_写 礼_貌 正_式 口_语 纠_正 改_正 列_出 列_举
    简_述 概_述 简_介 扩_写 概_要 分_類 感_情 和_訳 英_訳 抽_出 添_削 校_正 推_敲 文_法 綴_り 誤_字 題_名 見_出 件_名 表_題 同_義 類_義 対_義 定_義 意_味 識_別
    話_題 主_題 語_調 口_調 短_縮 簡_潔 箇_条 標_語 記_述 丁_寧 敬_語 訂_正 校_閲 列_挙 挙_げ`,
  [Lex.Chat]: `hi hello hey thanks thank_you good_morning how_are joke jokes funny fun chat story stories poem
    poems song lyrics haiku limerick roleplay pretend imagine favorite favourite opinion advice tips
    feel feeling friend friends birthday weekend hobby hobbies movie movies book books recipe recipes
    hola gracias chiste cuento poema canción bonjour merci blague poème chanson hallo danke witz gedicht
    olá obrigado piada привет спасибо шутка шутку анекдот стих стихи стихотворение песня песню рассказ
    你_好 谢_谢 笑_话 故_事 诗_歌 物_語
    muchas_gracias buenos_días buenos_dias buenas_noches buenas_tardes qué_tal cómo_estás como_estas chistes
    gracioso graciosa divertido divertida cuentos poemas poesía poesia cancion canciones finge imagina
    imagínate imaginate favorito favorita opinión consejo consejos trucos siento sentimiento sentimientos
    amigo amiga amigos cumpleaños cumpleanos finde pasatiempo pasatiempos afición película pelicula películas
    peliculas libro libros receta recetas amor aburrido aburrida me_aburro ola oi obrigada muito_obrigado
    bom_dia boa_noite boa_tarde tudo_bem como_vai piadas engraçado engracado engraçada historinha conto contos
    canção cancao canções música musica finja opinião opiniao conselho conselhos dica dicas sinto sentimento
    sentimentos aniversário aniversario passatempo filme filmes livro livros receita receitas entediado
    entediada tédio tedio salut bonsoir coucou merci_beaucoup bonne_nuit ça_va ca_va blagues drôle drole
    amusant amusante marrant raconte histoire_drôle conte contes poeme poèmes poemes poésie poesie chansons
    paroles fais_semblant imagines préféré prefere préférée favori avis conseil conseils astuce astuces
    ressens ami amie amis anniversaire passe_temps loisir loisirs livre livres recette recettes
    ennuie servus moin vielen_dank dankeschön dankeschoen guten_morgen gute_nacht guten_tag
    wie_gehts witze lustig spaß spass erzähl erzähle erzaehl märchen maerchen gedichte lieder songtext
    liedtext rollenspiel tu_so stell_dir lieblingsfilm lieblingsbuch meinung ratschlag ratschläge tipps fühle
    gefühl gefühle gefuehl freund freundin freunde geburtstag wochenende hobbys buch bücher rezept rezepte
    liebe langweilig mir_langweilig ciao grazie grazie_mille buongiorno buonanotte buonasera come_stai
    barzelletta barzellette divertente divertenti storiella racconto racconta fiaba favola canzone canzoni
    fingi immagina preferito preferita opinione parere consiglio consigli trucchi sento sentimenti amico amica
    amici compleanno fine_settimana libri ricetta ricette amore annoiato annoiata mi_annoio здравствуй
    здравствуйте благодарю доброе_утро спокойной_ночи добрый_день добрый_вечер как_дела шутки анекдоты смешной
    смешно весело сказка сказку текст_песни ролевая_игра притворись представь любимый любимая мнение совет
    советы лайфхак чувствую чувство чувства друг друга друзья день_рождения выходные хобби увлечение фильм
    фильмы книга книгу книги рецепт рецепты любовь скучно скучаю 您_好 多_谢 早_安 晚_安 哈_喽 搞_笑 有_趣 好_玩 写_诗 歌_曲 歌_词
    扮_演 假_装 想_象 最_爱 看_法 意_见 建_议 技_巧 窍_门 感_觉 感_受 心_情 朋_友 生_日 周_末 爱_好 兴_趣 电_影 书_籍 小_说 菜_谱 食_谱 爱_情 无_聊 聊_天 开_心
    感_謝 冗_談 面_白 小_説 童_話 歌_詞 作_詞 想_像 好_き 意_見 助_言 相_談 コ_ツ 気_分 友_達 友_人 週_末 趣_味 映_画 読_書 料_理 恋_愛 退_屈 雑_談`,
  [Lex.Question]: `what who whom whose when where which why how is_it are_there tell_me what_is who_is what_are
    name_a
    qué quién cuándo dónde cuál cómo pourquoi comment quand quel quelle warum wann welche wie что кто
    когда где какой какая почему как 什_么 为_什 怎_么 哪_里
    quiénes cuáles por_qué por_que cuántos cuántas cuánto cuánta cuantos cuantas qué_es cuál_es cual_es
    cómo_se es_cierto hay_algún existe_algún o_que o_quê quem quando onde qual quais por_quê porquê quantos
    quantas quanto quanta me_diga me_fale diga_me qual_é existe_algum é_verdade quoi où quels quelles combien
    combien_de dis_moi dites_moi est_il wer wo welcher welches wieso weshalb wie_viele wie_viel
    wieviel ist_es gibt_es sag_mir was_ist was_sind wie_funktioniert stimmt_es che_cosa chi quale quali perché
    quanti quante dimmi ci_sono è_vero come_mai come_funziona cosa_significa
    cosa_sono что_такое что_значит что_это какие какое зачем сколько скажи расскажи подскажи правда_ли есть_ли
    можно_ли каким_образом как_сделать как_работает 如_何 哪_个 哪_些 多_少 是_否 为_何 何_时 怎_样 请_问 告_诉 是_谁 谁_是 多_久 能_否
    な_ぜ ど_こ ど_れ ど_う 何_故 何_人 何_個 何_回 何_歳 誰_が 何_が 何_を 何_で`,
  [Lex.Logic]: `truth truthful lies lie liar knight knave either neither nor unless whoever whenever
    nobody everyone someone no_one all_of none_of at_least at_most exactly only_if must cannot not_both
    left_of right_of leftmost rightmost second_from immediately adjacent next_to before after earlier later
    older younger oldest youngest taller shorter tallest shortest heavier lighter ranked ranks position
    positions arranged arrangement fixed_order order swap swapped switch switched trade traded exchange
    exchanged consistent inconsistent contradict follows therefore hence thus deduced statements
    statement clues clue`,
  [Lex.Tech]: `matplotlib numpy scipy seaborn plotly opencv beautifulsoup scrapy django nestjs laravel symfony
    jquery webpack vite eslint pytest junit maven gradle cmake gcc clang llvm nginx tomcat docker gitlab
    bitbucket aws gcp firebase heroku vercel netlify linux ubuntu debian archlinux centos ssh scp rsync
    ffmpeg imagemagick wget cron crontab systemd systemctl vim neovim emacs vscode intellij pycharm
    xcode godot redis rabbitmq elasticsearch mongodb mysql sqlite mssql oracle_database vba tkinter pyqt
    qt gtk pygame opengl vulkan directx keras pytorch tensorflow huggingface langchain jupyter colab
    conda virtualenv venv pip npm pnpm nodejs deno webassembly wasm graphql grpc websocket websockets
    socket sockets localhost tcp udp http https url urls uri dns ip_address oauth jwt cors csrf div divs
    selector selectors onclick listener listeners dataframe dataframes dict dicts tuple tuples substring
    substrings regex arrays integer_overflow boolean booleans bytes byte bytearray utf utf8 unicode
    encoding decoding hex hexadecimal base64 csv tsv xlsx stdin stdout stderr async asynchronous await
    goroutine coroutine multithreading multiprocessing subprocess thread threads mutex semaphore
    nullpointerexception segmentation_fault typeerror valueerror keyerror indexerror syntaxerror
    referenceerror nameerror attributeerror traceback stacktrace exception exceptions runtime compile
    compiler bytecode jvm dotnet nuget rustc package_json requirements_txt virtual_environment
    env_variable environment_variable config configuration yml frontend backend fullstack devops ci_cd
    repo repos rebase pull_request commit commits gitignore localhost_port api endpoint endpoints
    webhook webhooks microservices serverless lambda_function telegram_bot discord_bot chatbot scraper
    scraping crawler parser parsing tokenizer lexer regex_pattern sql_query stored_procedure foreign_key
    primary_key orm schema_migration spreadsheet vlookup xlookup pivot_table conditional_formatting
    arduino esp32 microcontroller firmware bios uefi bash_script powershell_script batch_file exe dll
    apk ide sdk cli gui css3 html5 svg webgl three_js react_native swiftui kotlin_coroutines
    jetpack_compose xaml wpf winforms asp_net blazor
    spring_boot express_js raspberry_pi android_studio apache_spark device_driver linux_kernel git_branch git_merge
    node_js reactjs react_router react_query next_js nextjs nuxt vue_js vuex sveltekit angularjs emberjs
    alpinejs htmx preact lodash redux_toolkit rxjs tailwindcss tailwind_css material_ui styled_components
    shadcn ant_design antd threejs d3_js chart_js chartjs mapbox socket_io expressjs nest_js fastify
    discord_js discord_py electronjs electron_js apollo_client sequelize typeorm trpc formik tanstack momentjs
    esbuild turborepo vitest testing_library usestate useeffect usememo usecallback useref setstate
    getelementbyid queryselector addeventlistener innerhtml console_log settimeout xmlhttprequest fetch_api
    localstorage sessionstorage indexeddb service_worker virtual_dom django_rest scikit_learn hugging_face
    llamaindex ollama pydantic sqlalchemy pipenv jupyter_notebook jupyterlab ipython ipynb streamlit cv2 bs4
    asyncio pyqt5 pyinstaller cython pyspark xgboost lightgbm spacy nltk onnx tflite mlflow apache_airflow
    gunicorn uvicorn mypy pylint pyenv python3 selenium_webdriver webdriver yolov8 openai_api chatgpt_api
    springboot spring_security mockito testng log4j jdk jre javafx okhttp gson apache_tomcat hibernate_orm
    jdbc jpa servlet android_sdk recyclerview logcat aspnet net_core xamarin entity_framework linq rspec
    wordpress drupal codeigniter phpunit phpmyadmin xampp goroutines rustlang serde borrow_checker gdb
    valgrind sdl2 mingw cygwin pthread uikit cocoapods firestore unity3d unreal_engine godot_engine ue5
    gdscript shader shaders hlsl glsl rigidbody gameobject raycast npx nvm pip_install npm_install pypi
    brew_install apt_get winget dpkg bazel vs_code visual_studio nvim sublime_text webstorm rstudio jetbrains
    google_colab github_copilot tmux svn merge_conflict git_rebase git_commit git_push git_pull git_clone
    git_checkout git_reset git_stash github_actions github_pages stackoverflow jenkinsfile circleci gitlab_ci
    azure_devops argocd cicd docker_compose dockerhub docker_hub docker_swarm k8s kubectl helm_chart minikube
    podman openshift istio pulumi cloudformation eks gke fargate configmap s3 amazon_s3 ec2 aws_lambda
    dynamodb amazon_rds cloudwatch cloudfront route53 aws_iam sqs elastic_beanstalk api_gateway aws_cli
    sagemaker amazon_redshift aws_cognito microsoft_azure azure_functions azure_ad google_cloud bigquery
    cloudflare cloudflare_workers digitalocean linode supabase vmware virtualbox wsl wsl2 ngrok apache2
    traefik haproxy iis letsencrypt certbot nodemon sqlite3 opensearch apache_cassandra mariadb sql_server
    tsql plsql neo4j influxdb clickhouse databricks duckdb memcached pgadmin dbeaver mysql_workbench psql etl
    hadoop hdfs apache_kafka pubsub pub_sub sentry grafana prometheus kibana logstash elk_stack datadog
    new_relic newrelic splunk opentelemetry pagerduty postman curl openapi swagger_ui protobuf wireshark
    tcpdump burp_suite nmap netcat telnet twilio sendgrid auth0 keycloak api_key chmod chown chgrp grep sudo
    sftp mkdir rmdir rm_rf whoami ps_aux pkill killall htop lsof netstat ifconfig ipconfig traceroute tracert
    nslookup cronjob cron_job journalctl chroot umask inode symlink symlinks gzip gunzip xargs sigterm sigkill
    sigint sigsegv zombie_process bashrc zshrc bash_profile shell_script etc_hosts dev_null
    environment_variables sudoers iptables ufw selinux uname bootloader arch_linux kali_linux linux_mint
    freebsd cmd command_prompt regedit chkdsk taskkill posix unix nohup ssh_keygen ssh_key id_rsa
    file_descriptor file_descriptors syscall system_call mmap scanf memcpy typedef core_dump win32 x86 arm64
    dotenv htaccess tsconfig pom_xml strace tcp_ip http2 http3 quic webrtc smtp imap pop3 ftp ssl tls dhcp bgp
    vlan wireguard openvpn ipsec ipv4 ipv6 cidr subnet subnet_mask soap_api rpc oauth2 openid oidc saml ldap
    kerberos sso mqtt amqp i2c uart rtmp hls x509 gpg aes256 sha256 sha1 md5 bcrypt hmac diffie_hellman
    tls_handshake ssl_certificate ini_file bson jsonl geojson ascii iso8601 unix_timestamp epoch_timestamp
    uuid guid semver crlf mime_type multipart urlencoded url_encoding query_string h264 h265 hevc vp9 webm
    m3u8 gstreamer xslt xpath json_schema es6 commonjs pwa endianness crud_operations crud_app xss
    sql_injection nullreferenceexception npe stackoverflowerror stack_overflow outofmemoryerror oom
    importerror modulenotfounderror zerodivisionerror filenotfounderror runtimeerror recursionerror
    indentationerror unicodedecodeerror unicodeencodeerror assertionerror oserror permissionerror timeouterror
    connectionerror rangeerror uncaught_typeerror unhandled_rejection classnotfoundexception
    classcastexception arrayindexoutofboundsexception indexoutofboundsexception illegalargumentexception
    illegalstateexception concurrentmodificationexception numberformatexception ioexception
    filenotfoundexception sqlexception runtimeexception noclassdeffounderror invalidoperationexception
    argumentexception indexoutofrangeexception access_violation buffer_overflow memory_leak undefined_behavior
    undefined_behaviour undefined_reference linker_error compile_error compiler_error syntax_error
    runtime_error econnrefused econnreset enoent eacces eaddrinuse etimedout errno cors_error bad_gateway
    gateway_timeout permission_denied connection_refused kernel_panic infinite_loop dangling_pointer
    nil_pointer backtrace exception_handling try_catch unhandled_exception uncaught_exception detached_head
    hydration_error hydration_mismatch csrf_token big_o space_complexity hash_map hashtable hashset linkedlist
    binary_search avl_tree btree trie quicksort mergesort merge_sort quick_sort bubble_sort insertion_sort
    topological_sort dijkstra breadth_first depth_first dynamic_programming memoization recursive_function
    tail_recursion greedy_algorithm sliding_window union_find priority_queue min_heap max_heap adjacency_list
    np_complete np_hard halting_problem turing_machine deadlock race_condition thread_safe thread_safety
    concurrency async_await callback_hell event_loop garbage_collection garbage_collector smart_pointer
    object_oriented solid_principles singleton_pattern dependency_injection mvc mvvm load_balancer
    load_balancing reverse_proxy rate_limiting rate_limiter sharding cache_invalidation cap_theorem
    eventual_consistency 1nf 2nf 3nf bcnf denormalization inner_join left_join sql_join database_index
    idempotency consistent_hashing bloom_filter lru_cache cdn message_queue cqrs api_endpoint bearer_token
    access_token refresh_token bit_manipulation bitwise bitmask xor floating_point call_stack virtual_memory
    jit_compiler transpiler type_inference static_typing dynamic_typing duck_typing pure_function coroutines
    thread_pool state_machine linter linting monorepo technical_debt kmeans gradient_descent backpropagation
    softmax relu lstm rnn hyperparameter vector_database nullable type_casting`,
};

/**
 * Function words carry no task on their own: as unigrams their weights would only learn how each
 * training source writes, so the scanner drops them (they still count in word pairs: "how many"). The
 * Spanish, French, German, Portuguese, Italian and Russian ones matter most: nearly all the training
 * prompts in those languages are Stack Overflow titles, and "para" or "на" must not come to mean code.
 */
const STOP_WORDS = `a an the is are was were be been being am do does did have has had i you he she it we they me him her us
  them my your his its our their this that these those of in on at to for from by with as and or but if so than then
  there here what which who whom whose when where why how can could would should will shall may might must not no
  yes all any some each every one into out up down over about also just only very
  el la los las un una unos unas de del al y o pero que en con por para mi mis tu su sus es son está este esta
  ese esa lo le les se me te nos como más muy no sí ya
  le la les un une des du de et ou mais que qui en dans avec pour par mon ma mes ton ta son sa ses est sont ce
  cette ces je tu il elle nous vous ils elles me te se ne pas plus très oui
  der die das den dem des ein eine einen einem einer und oder aber dass in im mit für von zu zum zur auf ist
  sind ich du er sie es wir ihr mein meine dein sein nicht ja nein sehr auch
  o a os as um uma de do da dos das e ou mas que em no na nos nas com por para meu minha seu sua é são
  il lo la gli le un una di del della e o ma che in nel con per mio mia suo sua è sono non
  и в во на с со к ко по за из от до у о об для не ни но а или что как это этот эта эти мой моя мне меня
  ты он она мы вы они я бы же ли да нет`;

/** The lexMask bit of a stop word (above the list bits). */
export const STOP_WORD = 1 << 30;
/** The lexMask bit of a word that starts a listed two-word phrase: only then is the pair looked up. */
export const PHRASE_START = 1 << 29;

/**
 * Open-addressed table: token or phrase hash -> bit set of lists. Key 0 marks an empty slot (a hash that
 * is 0 is stored as 1, and looked up as 1), so a miss, the common case, costs one or two reads.
 */
const TABLE_BITS = 14;
const TABLE_SIZE = 1 << TABLE_BITS;
const TABLE_MASK = TABLE_SIZE - 1;
const keys = new Int32Array(TABLE_SIZE);
const masks = new Int32Array(TABLE_SIZE);

/** Hash of a phrase of two tokens, as the scanner computes it for adjacent tokens. */
export function phraseHash(first: number, second: number): number {
  return Math.imul(first, 0x01000193) ^ second;
}

let used = 0;

function insert(hash: number, bit: number): void {
  const key = hash === 0 ? 1 : hash;
  let slot = key & TABLE_MASK;
  while (keys[slot] !== 0 && keys[slot] !== key) slot = (slot + 1) & TABLE_MASK;
  if (keys[slot] === 0) used++;
  keys[slot] = key;
  masks[slot] = (masks[slot] as number) | bit;
}

for (const [lex, list] of Object.entries(LISTS)) {
  for (const entry of list.split(/\s+/)) {
    if (!entry) continue;
    // The scanner splits words at anything but a letter, a digit or '_': an entry holding another character
    // ("c'est") could never be found.
    if (/[^\p{L}\p{N}_]/u.test(entry)) throw new Error(`lexicon entry "${entry}" can never match a token`);
    const parts = entry.split('_');
    const [first, second] = parts as [string, string | undefined];
    if (second === undefined) {
      insert(hashString(first), 1 << Number(lex));
    } else {
      insert(phraseHash(hashString(first), hashString(second)), 1 << Number(lex));
      insert(hashString(first), PHRASE_START);
    }
  }
}
for (const word of STOP_WORDS.split(/\s+/)) if (word) insert(hashString(word), STOP_WORD);
// A miss, the common case, probes until an empty slot: past half full that grows quickly (and a full table
// would never find one), so longer lists must come with a larger table.
if (used > TABLE_SIZE / 2) throw new Error(`lexicon table ${used} of ${TABLE_SIZE} slots used: raise TABLE_BITS`);

/** Bit set of the lists a token (or phrase) hash belongs to; 0 when none. */
export function lexMask(hash: number): number {
  const key = hash === 0 ? 1 : hash;
  let slot = key & TABLE_MASK;
  for (;;) {
    const k = keys[slot] as number;
    if (k === key) return masks[slot] as number;
    if (k === 0) return 0;
    slot = (slot + 1) & TABLE_MASK;
  }
}
